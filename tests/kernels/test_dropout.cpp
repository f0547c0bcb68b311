// dropout: the extremes p = 0 and p = 1, the 1/(1-p) scale, the keep fraction
// on 1e5 elements, determinism from the seed, eval mode, the mask against the
// shared predicate (kernels/dropout_math.h), a backward that reuses the mask, and
// PyTorch's x * mask * scale for inf and NaN (a dropped one is NaN, not 0).
#include <cmath>
#include <vector>

#include "core/generator.h"
#include "kernels/dropout_math.h"
#include "kernels/ops.h"
#include "models/dropout.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

namespace {

// Values in [1, 2): never zero, so an output is zero exactly where the mask dropped it.
Tensor nonzero_input(const Shape& shape, DType dtype = kFloat32) { return rand(shape, dtype, 1.0, 2.0); }

// A kept f32 value is x * 1 * scale, scale = 1 / (1 - p) with p rounded to f32 (kernels/dropout_math.h):
// relative to x / (1 - p), p's rounding is p / (1 - p) units through 1 - p, then 1 - p, the
// division and the product one each.
double dropout_tolerance(double p) { return (p / (1 - p) + 3) * test::unit_roundoff(kFloat32); }

}  // namespace

TEST_CASE("dropout with p = 0 is the identity and p = 1 zeroes everything", "[dropout]") {
  const Tensor x = nonzero_input({1000});
  test::expect_close(dropout(x, 0.0, true), x, 0, "dropout p=0");
  expect_values(dropout(x, 1.0, true), std::vector<double>(1000, 0.0), 0, "dropout p=1");
}

TEST_CASE("dropout keeps about 1 - p of the elements, scaled by 1 / (1 - p)", "[dropout]") {
  manual_seed(21);
  constexpr int64_t kN = 100000;
  for (double p : {0.1, 0.3, 0.5, 0.9}) {
    const Tensor x = nonzero_input({kN});
    const std::vector<double> xs = x.to_vector<double>(), ys = dropout(x, p, true).to_vector<double>();
    int64_t kept = 0;
    double worst = 0.0;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (ys[i] == 0.0) continue;
      ++kept;
      worst = std::max(worst, std::fabs(ys[i] - xs[i] / (1.0 - p)) / std::fabs(xs[i] / (1.0 - p)));
    }
    INFO("p = " << p << ": kept " << kept << " of " << kN);
    CHECK(worst <= dropout_tolerance(p));
    // The kept count is Binomial(n, 1 - p): standard deviation sqrt(p (1 - p) / n) <= 0.0016 for
    // n = 1e5; 5 standard deviations (a 1-in-1.7-million miss for a fair generator) is the tolerance.
    const double fraction = static_cast<double>(kept) / kN;
    CHECK(std::fabs(fraction - (1.0 - p)) <= 5.0 * std::sqrt(p * (1.0 - p) / kN));
  }
}

TEST_CASE("dropout draws the same mask from the same seed", "[dropout]") {
  const Tensor x = nonzero_input({4096});
  manual_seed(7);
  const Tensor a = dropout(x, 0.5, true);
  const Tensor b = dropout(x, 0.5, true);  // the generator moved on: a different mask
  manual_seed(7);
  const Tensor c = dropout(x, 0.5, true);
  test::expect_close(c, a, 0, "dropout same seed");
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  int64_t differ = 0;
  for (size_t i = 0; i < av.size(); ++i) differ += (av[i] == 0.0) != (bv[i] == 0.0);
  CHECK(differ > 1000);  // two independent p = 0.5 masks disagree on about half of 4096 positions
}

TEST_CASE("dropout's mask is the shared Philox predicate", "[dropout]") {
  const Tensor x = nonzero_input({1001}, kFloat64);  // not a multiple of 4: the last counter is partial
  const GeneratorState state{1234, 56};
  const double p = 0.4;
  const std::vector<double> ys = kernels::dropout(x, p, state).to_vector<double>();
  const std::vector<double> xs = x.to_vector<double>();
  std::vector<double> expected(xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    expected[i] = kernels::dropout_keep(state.seed, state.offset, i, static_cast<float>(p))
                      ? xs[i] * static_cast<double>(kernels::dropout_scale(static_cast<float>(p)))
                      : 0.0;
  expect_values(from_vector<double>(ys, {1001}), expected, 1e-15, "dropout vs dropout_keep");
  CHECK(kernels::dropout_counters(1001) == 251);
}

TEST_CASE("dropout multiplies by the mask: a dropped inf or NaN is NaN, as in PyTorch", "[dropout]") {
  // PyTorch computes x * mask * scale (and x * 0 for p = 1), so a dropped inf or NaN is
  // NaN and a kept one stays inf (scaled) or NaN; finite dropped values are 0.
  const GeneratorState state{99, 3};
  const double p = 0.5;
  const float inf = INFINITY;
  std::vector<float> values;
  for (int i = 0; i < 64; ++i) values.push_back(i % 4 == 0 ? inf : i % 4 == 1 ? -inf : i % 4 == 2 ? NAN : 1.5f);
  for (DType dtype : {kFloat32, kFloat64, kFloat16}) {
    const Tensor x = from_vector<float>(values, {64}).to(dtype);
    const std::vector<double> ys = kernels::dropout(x, p, state).to_vector<double>();
    int64_t dropped = 0, kept = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      INFO(dtype_name(dtype) << " element " << i << " = " << values[i] << " gave " << ys[i]);
      const bool keep = kernels::dropout_keep(state.seed, state.offset, i, static_cast<float>(p));
      (keep ? kept : dropped) += 1;
      if (std::isnan(values[i]) || (!keep && std::isinf(values[i]))) {
        CHECK(std::isnan(ys[i]));
      } else if (keep) {
        CHECK(ys[i] == 2.0 * static_cast<double>(values[i]));  // inf stays inf, 1.5 becomes 3
      } else {
        CHECK(ys[i] == 0.0);
      }
    }
    CHECK(dropped > 0);  // both branches were exercised (a p = 0.5 mask over 64 elements)
    CHECK(kept > 0);
    // p = 1 is x * 0: every inf and NaN becomes NaN, every finite value 0.
    const std::vector<double> all = kernels::dropout(x, 1.0, state).to_vector<double>();
    for (size_t i = 0; i < values.size(); ++i) {
      const bool expected = std::isfinite(values[i]) ? all[i] == 0.0 : std::isnan(all[i]);
      CHECK(expected);
    }
  }
}

TEST_CASE("dropout in eval mode is the identity", "[dropout]") {
  const Tensor x = nonzero_input({64, 10});
  const Tensor y = dropout(x, 0.5, /*training=*/false);
  CHECK(y.is_same(x));
}

TEST_CASE("dropout's backward applies the forward mask", "[dropout]") {
  manual_seed(8);
  const double p = 0.25;
  const Tensor x = nonzero_input({3, 1000}).requires_grad_();
  const Tensor y = dropout(x, p, true);
  const Tensor dy = nonzero_input({3, 1000});
  y.backward(dy);
  const std::vector<double> ys = y.to_vector<double>(), gs = dy.to_vector<double>();
  std::vector<double> expected(ys.size());
  for (size_t i = 0; i < ys.size(); ++i) expected[i] = ys[i] == 0.0 ? 0.0 : gs[i] / (1.0 - p);
  expect_values(x.grad(), expected, dropout_tolerance(p), "dropout backward mask");
  // with the generator state pinned, dropout is a fixed linear map: gradcheck applies
  const GeneratorState pinned = generator_state();
  test::expect_gradcheck(
      [&](auto& in) {
        set_generator_state(pinned);
        return dropout(in[0], 0.3, true);
      },
      {randn({4, 5}, kFloat64)}, "dropout");
}

TEST_CASE("dropout keeps f16 storage", "[dropout][f16]") {
  manual_seed(9);
  const Tensor x = nonzero_input({256}, kFloat16);
  const Tensor y = dropout(x, 0.5, true);
  CHECK(y.dtype() == kFloat16);
  const std::vector<double> xs = x.to_vector<double>(), ys = y.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i)
    if (ys[i] != 0.0) CHECK(ys[i] == 2.0 * xs[i]);  // scaling by 2 is exact in f16
}

TEST_CASE("dropout2d zeroes whole channels and scales the rest by 1 / (1 - p)", "[dropout]") {
  manual_seed(3);
  const Tensor x = ones({8, 16, 5, 5}).requires_grad_();
  const Tensor y = dropout2d(x, 0.25, true);
  const std::vector<float> v = y.to_vector<float>();
  int64_t dropped = 0;
  for (int64_t plane = 0; plane < 8 * 16; ++plane) {
    const float first = v[static_cast<size_t>(plane * 25)];
    CHECK((first == 0.0f || first == 1.0f / 0.75f));  // 1 / (1 - p) in f32
    for (int64_t i = 1; i < 25; ++i) CHECK(v[static_cast<size_t>(plane * 25 + i)] == first);  // the whole plane
    dropped += first == 0.0f;
  }
  // 128 channels, each dropped with probability 1/4: 32 expected, and 4.9 standard deviations
  // (sqrt(128 * 0.25 * 0.75)) either side hold all but 1 in a million draws.
  CHECK(std::abs(dropped - 32) <= 24);
  // The gradient uses the same mask: d sum(y) / dx = y / x = y.
  sum(y).backward();
  CHECK(x.grad().to_vector<float>() == v);
  // One image [C, H, W]: its channels x[c] are the planes; feature_dropout takes [N, C, ...].
  manual_seed(4);
  const std::vector<float> image = dropout2d(ones({6, 3, 3}), 0.5, true).to_vector<float>();
  for (int64_t c = 0; c < 6; ++c)
    for (int64_t i = 1; i < 9; ++i) CHECK(image[static_cast<size_t>(c * 9 + i)] == image[static_cast<size_t>(c * 9)]);
  manual_seed(5);
  const std::vector<float> rows = feature_dropout(ones({4, 3, 7}), 0.5, true).to_vector<float>();
  for (int64_t c = 0; c < 12; ++c)
    for (int64_t i = 1; i < 7; ++i) CHECK(rows[static_cast<size_t>(c * 7 + i)] == rows[static_cast<size_t>(c * 7)]);
  // The identity in eval mode, and the layer.
  CHECK(dropout2d(x, 0.5, false).is_same(x));
  nn::Dropout2d layer(0.5);
  layer.eval();
  CHECK(layer.forward(x).is_same(x));
  CHECK(layer.str() == "Dropout2d(p=0.5)");
  expect_error_contains([] { nn::Dropout2d(1.5); }, {"Dropout2d", "[0, 1]", "1.5"});
}

TEST_CASE("dropout rejects a probability outside [0, 1]", "[dropout][errors]") {
  expect_error_contains([] { dropout(zeros({2, 3}), 1.5, true); }, {"dropout", "1.5", "[2, 3]"});
  expect_error_contains([] { dropout(zeros({2, 3}), -0.1, true); }, {"dropout", "-0.1"});
}
