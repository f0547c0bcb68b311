// core/portable_math.h and the normal draw built on it: accurate, and the same bits however the
// compiler treats multiply-adds (the property that makes CPU and CUDA draws identical; the op
// contract's randn cases compare the two backends bit for bit where a GPU is present).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/generator.h"
#include "core/philox.h"
#include "core/portable_math.h"
#include "kernels/factories.h"
#include "tests/core/normal_draw_strict.h"

using namespace ember;

namespace {

constexpr long double kTwoPiL = 6.283185307179586476925286766559005768L;

// Philox's uniform floats in (0, 1], and a few edges: the smallest, the largest below 1, 1.
std::vector<double> unit_floats(int count) {
  std::vector<double> u = {0x1p-24, 0x1p-23, 3 * 0x1p-24, 0.5 - 0x1p-24, 0.5, 0.5 + 0x1p-24, 1 - 0x1p-24, 1.0};
  for (int i = 0; i < count; ++i) u.push_back(philox_uniform(99, 0, static_cast<uint64_t>(i)));
  return u;
}

}  // namespace

TEST_CASE("portable log and cos match the C library's long double to a few units in the last place", "[core][rng]") {
  // Both are sums of a handful of rounded terms in double (see core/portable_math.h): 4 units
  // of roundoff of the result for log, relative; cos is bounded by 1, so absolute.
  const double u = std::ldexp(1.0, -53);
  double worst_log = 0, worst_cos = 0;
  for (double x : unit_floats(200000)) {
    const long double ref_log = std::log(static_cast<long double>(x));
    const double log_err = std::fabs(static_cast<long double>(portable_log(x)) - ref_log);
    worst_log = std::max(worst_log, ref_log == 0 ? log_err : log_err / std::fabs(static_cast<double>(ref_log)));
    const long double ref_cos = std::cos(kTwoPiL * static_cast<long double>(x));
    worst_cos = std::max(worst_cos, static_cast<double>(std::fabs(static_cast<long double>(portable_cos_2pi(x)) - ref_cos)));
  }
  for (double x : {1e-300, 1e-10, 0.1, 2.0, 3.5, 1e10, 1e300}) {  // log takes any positive x
    const long double ref = std::log(static_cast<long double>(x));
    worst_log = std::max(worst_log, static_cast<double>(std::fabs((portable_log(x) - ref) / ref)));
  }
  INFO("worst relative error of log " << worst_log / u << " u, worst error of cos " << worst_cos / u << " u");
  CHECK(worst_log <= 4 * u);
  CHECK(worst_cos <= 4 * u);
  CHECK(portable_log(1.0) == 0.0);
  CHECK(portable_cos_2pi(0.0) == 1.0);
  CHECK(portable_cos_2pi(0.5) == -1.0);
}

TEST_CASE("a normal draw is Box-Muller in long double rounded once to float", "[core][rng]") {
  // The double computation is within a few 1e-16 of the exact value, so rounding it to float
  // gives the correctly rounded float except within that distance of a rounding boundary (about
  // one draw in 10^8); none of these 200000 draws is one.
  int differ = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    const PhiloxOutput r = philox4x32(5, 7 + i / 2);
    const int lane = static_cast<int>(i % 2) * 2;
    const long double u1 = uint_to_unit_float(r.v[lane]), u2 = uint_to_unit_float(r.v[lane + 1]);
    const float want = static_cast<float>(std::sqrt(-2 * std::log(u1)) * std::cos(kTwoPiL * u2));
    const float got = philox_normal(5, 7, i);
    if (got != want) {
      ++differ;
      INFO("draw " << i << ": got " << got << ", Box-Muller in long double " << want);
      CHECK(std::fabs(got - want) <= std::nextafter(std::fabs(want), INFINITY) - std::fabs(want));
    }
  }
  CHECK(differ == 0);
}

TEST_CASE("randn and rand draw the bits of a strict, unfused compile of the same formulas", "[core][rng]") {
  // The library is compiled with -O3 -march=native, where GCC fuses a * b + c into an FMA
  // unless the source already is one; tests/core/normal_draw_strict.cpp is compiled with
  // neither optimisation nor FMA. Equal bits mean no multiply-add was left for a compiler to
  // fuse, so nvcc (which fuses by default) computes what the CPU computes.
  constexpr int64_t n = 100003;
  manual_seed(11);
  const GeneratorState normal_state = generator_state();
  const std::vector<float> normal = randn({n}, TensorOptions(DType::f32), 1.0, 2.0).to_vector<float>();
  const GeneratorState uniform_state = generator_state();
  const std::vector<float> uniform = rand({n}, TensorOptions(DType::f32), -2.0, 3.0).to_vector<float>();
  int64_t differ = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t k = static_cast<uint64_t>(i);
    const float z = test::strict_scale_and_shift(test::strict_philox_normal(normal_state.seed, normal_state.offset, k), 2.0f, 1.0f);
    const float u = test::strict_scale_and_shift(
        1.0f - test::strict_philox_uniform(uniform_state.seed, uniform_state.offset, k), 5.0f, -2.0f);
    differ += (z != normal[static_cast<size_t>(i)]) + (u != uniform[static_cast<size_t>(i)]);
  }
  CHECK(differ == 0);
  // Every dtype holds the same draw: f64 is the f32 number widened.
  manual_seed(11);
  const std::vector<double> wide = randn({n}, TensorOptions(DType::f64), 1.0, 2.0).to_vector<double>();
  for (int64_t i = 0; i < n; i += 997) CHECK(wide[static_cast<size_t>(i)] == static_cast<double>(normal[static_cast<size_t>(i)]));
}
