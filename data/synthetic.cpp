#include "data/synthetic.h"

#include <cmath>
#include <random>
#include <vector>

#include "core/error.h"
#include "kernels/factories.h"

namespace ember::data {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSpiralTurnRadians = 4.0;  // how far each arm winds from centre to rim
constexpr double kBlobRadius = 3.0;

// mt19937_64's output sequence is fixed by the standard; the distributions are
// not, so uniform and normal draws are computed here.
class PointRng {
 public:
  explicit PointRng(uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
  double normal() {  // Box-Muller
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
  }

 private:
  std::mt19937_64 engine_;
};

void check_options(const SyntheticOptions& o, const char* op) {
  EMBER_CHECK(o.samples_per_class > 0 && o.classes > 0,
              op << ": samples_per_class and classes must be positive, got " << o.samples_per_class << " and "
                 << o.classes);
  EMBER_CHECK(o.noise >= 0.0, op << ": noise must be >= 0, got " << o.noise);
}

// point(k, i, rng) -> {x, y} for sample i of class k; points stored class-major.
template <class PointFn>
Dataset build(const char* name, const SyntheticOptions& o, PointFn point) {
  check_options(o, name);
  const int64_t n = o.samples_per_class * o.classes;
  std::vector<float> xy;
  std::vector<int64_t> labels;
  xy.reserve(static_cast<size_t>(n) * 2);
  labels.reserve(static_cast<size_t>(n));
  PointRng rng(o.seed);
  for (int64_t k = 0; k < o.classes; ++k) {
    for (int64_t i = 0; i < o.samples_per_class; ++i) {
      const auto [x, y] = point(k, i, rng);
      xy.push_back(static_cast<float>(x));
      xy.push_back(static_cast<float>(y));
      labels.push_back(k);
    }
  }
  return make_dataset(name, from_vector<float>(xy, {n, 2, 1, 1}), from_vector<int64_t>(labels, {n}), o.classes);
}

}  // namespace

Dataset make_spirals(const SyntheticOptions& o) {
  return build("spirals", o, [&](int64_t k, int64_t i, PointRng& rng) {
    const double r = o.samples_per_class > 1 ? static_cast<double>(i) / static_cast<double>(o.samples_per_class - 1)
                                             : 1.0;
    const double angle = kSpiralTurnRadians * r + 2.0 * kPi * static_cast<double>(k) / static_cast<double>(o.classes) +
                         o.noise * rng.normal();
    return std::pair<double, double>{r * std::sin(angle), r * std::cos(angle)};
  });
}

Dataset make_blobs(const SyntheticOptions& o) {
  return build("blobs", o, [&](int64_t k, int64_t, PointRng& rng) {
    const double centre = 2.0 * kPi * static_cast<double>(k) / static_cast<double>(o.classes);
    const double x = kBlobRadius * std::cos(centre) + o.noise * rng.normal();
    const double y = kBlobRadius * std::sin(centre) + o.noise * rng.normal();
    return std::pair<double, double>{x, y};
  });
}

Dataset make_synthetic(const std::string& name, const SyntheticOptions& options) {
  if (name == "spirals") return make_spirals(options);
  if (name == "blobs") return make_blobs(options);
  EMBER_THROW("synthetic data: unknown problem '" << name << "' (known: spirals, blobs)");
}

}  // namespace ember::data
