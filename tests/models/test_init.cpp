// nn::init: libtorch's fans and gains, draws equal to the factories' under the same seed, and
// in-place writes that parameters accept.
#include <cmath>

#include "core/generator.h"
#include "models/init.h"
#include "models/linear.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;
using namespace ember::nn;
using namespace ember::test;

namespace {

// A bound or std computed by other double operations than init's differs from it by a few units
// of f64, yet rounded to f32 (the draw's low and span, or its mean and std: kernels/cpu/random.cpp)
// the two may land one rounding apart each: 2 units of b and of the span 2b; the draw's fma then
// rounds once on each side. |a - e| <= 6 u b + 2 u |e| <= 8 u (1 + |e|) for b <= 1, as every
// bound and std here is (the others pass the very same doubles).
const double kDrawTolerance = 8 * test::unit_roundoff(kFloat32);

// What init::<fn>_ should have drawn: the same factory call after the same seed.
template <class Init, class Draw>
void expect_same_draw(const Shape& shape, Init init, Draw draw, const std::string& what, Device device = kCPU) {
  Tensor t = zeros(shape, TensorOptions().device(device));
  manual_seed(7);
  Tensor returned = init(t);
  CHECK(returned.is_same(t));
  manual_seed(7);
  expect_close(t.to(kCPU), draw(TensorOptions().device(device)).to(kCPU), kDrawTolerance, what);
}

}  // namespace

TEST_CASE("init: fan in and fan out of linear and conv weights, as libtorch computes them", "[init]") {
  CHECK(init::calculate_fan_in_and_fan_out(zeros({4, 3})) == std::pair<int64_t, int64_t>{3, 4});
  CHECK(init::calculate_fan_in_and_fan_out(zeros({8, 3, 5, 5})) == std::pair<int64_t, int64_t>{75, 200});
  expect_error_contains([] { init::calculate_fan_in_and_fan_out(zeros({5})); }, {"at least 2 dims", "[5]"});
  expect_error_contains([] { init::kaiming_uniform_(zeros({5})); }, {"at least 2 dims"});
}

TEST_CASE("init: calculate_gain", "[init]") {
  CHECK(init::calculate_gain(init::Nonlinearity::linear) == 1.0);
  CHECK(init::calculate_gain(init::Nonlinearity::conv) == 1.0);
  CHECK(init::calculate_gain(init::Nonlinearity::sigmoid) == 1.0);
  CHECK(init::calculate_gain(init::Nonlinearity::tanh) == Approx(5.0 / 3.0));
  CHECK(init::calculate_gain(init::Nonlinearity::relu) == Approx(std::sqrt(2.0)));
  CHECK(init::calculate_gain(init::Nonlinearity::leaky_relu) == Approx(std::sqrt(2.0 / (1 + 0.01 * 0.01))));
  CHECK(init::calculate_gain(init::Nonlinearity::leaky_relu, std::sqrt(5.0)) == Approx(std::sqrt(1.0 / 3.0)));
}

TEST_CASE("init: kaiming and xavier draw libtorch's bounds from the seeded generator", "[init]") {
  const Shape conv{6, 4, 3, 3};  // fan_in 36, fan_out 54
  const double relu_gain = std::sqrt(2.0);
  expect_same_draw(conv, [](Tensor t) { return init::kaiming_uniform_(t, 0.0, init::FanMode::fan_in, init::Nonlinearity::relu); },
                   [&](TensorOptions o) {
                     const double bound = std::sqrt(3.0) * relu_gain / std::sqrt(36.0);
                     return rand(conv, o, -bound, bound);
                   },
                   "kaiming_uniform_ fan_in relu");
  expect_same_draw(conv, [](Tensor t) { return init::kaiming_normal_(t, 0.0, init::FanMode::fan_out, init::Nonlinearity::relu); },
                   [&](TensorOptions o) { return randn(conv, o, 0.0, relu_gain / std::sqrt(54.0)); },
                   "kaiming_normal_ fan_out relu");
  expect_same_draw(conv, [](Tensor t) { return init::xavier_uniform_(t, 2.0); },
                   [&](TensorOptions o) {
                     const double bound = std::sqrt(3.0) * 2.0 * std::sqrt(2.0 / 90.0);
                     return rand(conv, o, -bound, bound);
                   },
                   "xavier_uniform_ gain 2");
  expect_same_draw(conv, [](Tensor t) { return init::xavier_normal_(t); },
                   [&](TensorOptions o) { return randn(conv, o, 0.0, std::sqrt(2.0 / 90.0)); }, "xavier_normal_");
  expect_same_draw({5, 2}, [](Tensor t) { return init::uniform_(t, -3, 1); },
                   [](TensorOptions o) { return rand({5, 2}, o, -3, 1); }, "uniform_");
  expect_same_draw({5, 2}, [](Tensor t) { return init::normal_(t, 1, 0.5); },
                   [](TensorOptions o) { return randn({5, 2}, o, 1, 0.5); }, "normal_");
}

TEST_CASE("init: Linear's default init is kaiming_uniform_ with a = sqrt(5)", "[init]") {
  manual_seed(11);
  Linear fc(5, 4);
  Tensor w = zeros({4, 5});
  manual_seed(11);
  init::kaiming_uniform_(w, std::sqrt(5.0));
  expect_close(w, fc.weight(), kDrawTolerance, "Linear init vs kaiming_uniform_(sqrt(5))");  // b = 1/sqrt(5)
}

TEST_CASE("init: fills write parameters in place without recording a graph", "[init]") {
  Linear fc(3, 2);
  const Tensor weight = fc.weight();
  init::ones_(fc.weight());
  expect_close(weight, ones({2, 3}), 0, "ones_");
  init::zeros_(fc.bias());
  expect_close(fc.bias(), zeros({2}), 0, "zeros_");
  init::constant_(fc.weight(), -0.25);
  expect_close(weight, full({2, 3}, -0.25), 0, "constant_");
  init::xavier_uniform_(fc.weight());
  CHECK(weight.requires_grad());
  CHECK(weight.is_leaf());
  CHECK(fc.weight().is_same(weight));

  expect_error_contains([] { init::zeros_(zeros({2}, kInt64)); }, {"zeros_", "floating", "i64"});
  expect_error_contains([] { init::ones_(Tensor()); }, {"ones_", "undefined"});
}

EMBER_CUDA_TEST_CASE("init: the same draws on CUDA as on the CPU", "[init]") {
  const Shape shape{16, 8};
  expect_same_draw(shape, [](Tensor t) { return init::kaiming_uniform_(t); },
                   [&](TensorOptions) {
                     // kaiming_uniform_'s default a is 0 (PyTorch's), not calculate_gain's default slope 0.01.
                     const double bound = std::sqrt(3.0) * init::calculate_gain(init::Nonlinearity::leaky_relu, 0.0) / std::sqrt(8.0);
                     return rand(shape, TensorOptions(), -bound, bound);
                   },
                   "kaiming_uniform_ on cuda vs cpu", kCUDA);
  expect_same_draw(shape, [](Tensor t) { return init::xavier_normal_(t); },
                   [&](TensorOptions) { return randn(shape, TensorOptions(), 0.0, std::sqrt(2.0 / 24.0)); },
                   "xavier_normal_ on cuda vs cpu", kCUDA);
}
