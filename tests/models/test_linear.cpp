#include <algorithm>
#include <cmath>
#include <memory>

#include "core/generator.h"
#include "models/linear.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

namespace {
// W [out=3, in=2], b [3], x [2, 2]; y = x W^T + b worked by hand:
//   row 0: x = ( 1, -1): (1-2+0.5, 3-4-1, 5-6+2)      = (-0.5, -2,  1)
//   row 1: x = ( 2, .5): (2+1+0.5, 6+2-1, 10+3+2)     = ( 3.5,  7, 15)
// Every product and partial sum is a small multiple of 1/2: exact in f32, in any order.
Tensor hand_w() { return from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2}); }
Tensor hand_b() { return from_vector<float>({0.5f, -1, 2}, {3}); }
Tensor hand_x() { return from_vector<float>({1, -1, 2, 0.5f}, {2, 2}); }
}  // namespace

TEST_CASE("linear matches hand-computed values", "[linear]") {
  expect_values(linear(hand_x(), hand_w(), hand_b()), {-0.5, -2, 1, 3.5, 7, 15}, 0, "linear");
  expect_values(linear(hand_x(), hand_w()), {-1, -1, -1, 3, 8, 13}, 0, "linear without bias");
  // [..., in] inputs: rows are folded and the leading dims restored.
  Tensor x3 = from_vector<float>({1, -1, 2, 0.5f, 1, -1, 2, 0.5f}, {2, 2, 2});
  Tensor y3 = linear(x3, hand_w(), hand_b());
  CHECK(y3.shape() == Shape{2, 2, 3});
  expect_values(y3, {-0.5, -2, 1, 3.5, 7, 15, -0.5, -2, 1, 3.5, 7, 15}, 0, "linear 3-D");
  Tensor x1 = from_vector<float>({1, -1}, {2});
  CHECK(linear(x1, hand_w(), hand_b()).shape() == Shape{3});
}

TEST_CASE("nn::Linear forward uses its weight [out, in] and bias", "[linear]") {
  nn::Linear fc(2, 3);
  CHECK(fc.weight().shape() == Shape{3, 2});
  CHECK(fc.bias().shape() == Shape{3});
  fc.weight().detach().copy_(hand_w());
  fc.bias().detach().copy_(hand_b());
  expect_values(fc.forward(hand_x()), {-0.5, -2, 1, 3.5, 7, 15}, 0, "Linear");

  nn::Linear no_bias(nn::LinearOptions(2, 3).bias(false));
  CHECK_FALSE(no_bias.bias().defined());
  CHECK(no_bias.parameters().size() == 1);
  no_bias.weight().detach().copy_(hand_w());
  expect_values(no_bias.forward(hand_x()), {-1, -1, -1, 3, 8, 13}, 0, "Linear without bias");
}

TEST_CASE("linear gradients pass gradcheck for x, weight and bias", "[linear][gradcheck]") {
  Tensor x = randn({4, 3}, kFloat64);
  Tensor w = randn({5, 3}, kFloat64);
  Tensor b = randn({5}, kFloat64);
  expect_gradcheck([](auto& in) { return linear(in[0], in[1], in[2]); }, {x, w, b}, "linear");
  expect_gradcheck([](auto& in) { return linear(in[0], in[1]); }, {x, w}, "linear without bias");
  expect_gradcheck([](auto& in) { return linear(in[0], in[1], in[2]); }, {randn({2, 3, 3}, kFloat64), w, b},
                   "linear 3-D input");
  expect_gradcheck([](auto& in) { return linear(in[0], in[1], in[2]); },
                   {randn({1, 1}, kFloat64), randn({1, 1}, kFloat64), randn({1}, kFloat64)}, "linear 1x1");
}

TEST_CASE("linear gradients reach only the inputs that need them", "[linear]") {
  Tensor x = randn({4, 3});
  Tensor w = randn({2, 3}).requires_grad_();
  Tensor b = zeros({2}).requires_grad_();
  sum(linear(x, w, b)).backward();
  CHECK_FALSE(x.grad().defined());
  // d(sum y)/dW[o, i] = sum of x[:, i] over the 4 rows, in fp64 here; d(sum y)/db[o] = rows.
  const Tensor x64 = x.to(kFloat64);
  const Tensor column_sums = sum(x64, 0), column_magnitudes = sum(abs(x64), 0);
  test::expect_within(w.grad(), stack({column_sums, column_sums}),
                      test::sum_error_bound(4, kFloat32, stack({column_magnitudes, column_magnitudes})), "linear dW");
  expect_values(b.grad(), {4, 4}, 0, "linear db");
}

TEST_CASE("shape mismatches name linear and both shapes", "[linear][errors]") {
  expect_error_contains([] { linear(zeros({2, 5}), zeros({3, 4})); }, {"linear", "[2, 5]", "[3, 4]"});
  expect_error_contains([] { linear(zeros({2, 4}), zeros({3, 4}), zeros({4})); }, {"linear", "bias", "[4]", "[3, 4]"});
  expect_error_contains([] { linear(zeros({2, 4}), zeros({12})); }, {"linear", "weight", "[12]"});
  nn::Linear fc(4, 3);
  expect_error_contains([&] { fc.forward(zeros({2, 5})); }, {"linear", "[2, 5]", "[3, 4]"});
  expect_error_contains([] { nn::Linear bad(0, 3); }, {"Linear", "in=0"});
}

TEST_CASE("Linear init: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias, reproducible by seed", "[linear]") {
  manual_seed(7);
  nn::Linear fc(100, 50);
  const double bound = 0.1;  // 1 / sqrt(100)
  const std::vector<double> w = fc.weight().to_vector<double>();
  const std::vector<double> b = fc.bias().to_vector<double>();
  const auto [w_min, w_max] = std::minmax_element(w.begin(), w.end());
  CHECK(*w_min >= -bound);
  CHECK(*w_max <= bound);
  // 5000 uniform draws: the extremes come within 10% of the bound (a miss has probability 2 * 0.95^5000).
  CHECK(*w_max > 0.9 * bound);
  CHECK(*w_min < -0.9 * bound);
  double mean = 0;
  for (double v : w) mean += v / static_cast<double>(w.size());
  CHECK(std::fabs(mean) < 0.005);  // std of the mean is 0.1/sqrt(3*5000) = 0.0008: a 6-sigma bound
  for (double v : b) CHECK(std::fabs(v) <= bound);

  manual_seed(7);
  nn::Linear again(100, 50);
  CHECK(again.weight().to_vector<double>() == w);
  manual_seed(8);
  nn::Linear other(100, 50);
  CHECK(other.weight().to_vector<double>() != w);
}
