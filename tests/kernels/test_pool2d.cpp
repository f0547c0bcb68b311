// Pooling: max and average forward against hand-computed values (stride unequal
// to the kernel, padding, count_include_pad), max's gradient routing and NaN,
// gradcheck on inputs without ties, global average pooling, f16, errors.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ops.h"
#include "tests/support/op_contract.h"

using namespace ember;
using test::expect_error_contains;
using test::expect_gradcheck;
using test::expect_values;

namespace {

// 0..n-1 in a fixed scrambled order, scaled: all distinct, gaps of 0.1 >> gradcheck's eps,
// so no window has a tie and the max is differentiable everywhere.
Tensor distinct_values(const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1 * static_cast<double>((i * 37 + 11) % v.size()) - 1.0;
  return from_vector<double>(v, shape);
}

// 4x4 plane:  1  5  2  0
//             3  4  8  7
//             6  9 -1 -2
//            -3 11 10 12
Tensor plane4x4() {
  return from_vector<float>({1, 5, 2, 0, 3, 4, 8, 7, 6, 9, -1, -2, -3, 11, 10, 12}, {1, 1, 4, 4});
}

}  // namespace

TEST_CASE("max_pool2d matches hand-computed windows", "[pool]") {
  const Tensor x = plane4x4();
  expect_values(max_pool2d(x, 2), {5, 8, 11, 12}, 0, "max_pool2d 2x2");
  // kernel 3, stride 1: 2x2 overlapping windows
  expect_values(max_pool2d(x, 3, 1), {9, 9, 11, 12}, 0, "max_pool2d k3 s1");
  // kernel 1, stride 3 (stride > kernel): picks rows and columns 0 and 3
  expect_values(max_pool2d(x, 1, 3), {1, 0, -3, 12}, 0, "max_pool2d k1 s3");
  // kernel 3, stride 2, padding 1: windows rows/cols {-1..1}, {1..3}; padding never wins
  const Tensor negative = from_vector<float>({-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16},
                                             {1, 1, 4, 4});
  expect_values(max_pool2d(negative, 3, 2, 1), {-1, -2, -5, -6}, 0, "max_pool2d padded negatives");
  // non-square kernel (1, 2) with stride (1, 2)
  expect_values(max_pool2d(x, {1, 2}, {1, 2}), {5, 2, 4, 8, 9, -1, 11, 12}, 0, "max_pool2d 1x2");
  CHECK(max_pool2d(zeros({3, 2, 7, 5}), 2).shape() == Shape{3, 2, 3, 2});
}

TEST_CASE("max_pool2d sends each gradient to its window's maximum", "[pool]") {
  const Tensor x = plane4x4().requires_grad_();
  const Tensor y = max_pool2d(x, 3, 1);  // maxima 9, 9, 11, 12: the 9 collects two gradients
  y.backward(from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2}));
  expect_values(x.grad(), {0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 3, 0, 4}, 0, "max_pool2d backward");
}

TEST_CASE("max_pool2d propagates NaN like PyTorch", "[pool]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor y = max_pool2d(from_vector<float>({1, nan, 3, 2}, {1, 1, 2, 2}), 2);
  CHECK(std::isnan(y.item<float>()));
}

TEST_CASE("avg_pool2d matches hand-computed windows, padding counted", "[pool]") {
  const Tensor x = plane4x4();
  expect_values(avg_pool2d(x, 2), {13.0 / 4, 17.0 / 4, 23.0 / 4, 19.0 / 4}, 1e-7, "avg_pool2d 2x2");
  expect_values(avg_pool2d(x, 2, 1),
                {13.0 / 4, 19.0 / 4, 17.0 / 4, 22.0 / 4, 20.0 / 4, 12.0 / 4, 23.0 / 4, 29.0 / 4, 19.0 / 4}, 1e-7,
                "avg_pool2d k2 s1");
  // kernel 3, stride 2, padding 1: windows rows/cols {-1..1} and {1..3}; the divisor is 9 everywhere
  // (count_include_pad): top-left sums x[0..1][0..1] = 13, top-right x[0..1][1..3] = 26,
  // bottom-left x[1..3][0..1] = 30, bottom-right x[1..3][1..3] = 58.
  expect_values(avg_pool2d(x, 3, 2, 1), {13.0 / 9, 26.0 / 9, 30.0 / 9, 58.0 / 9}, 1e-7, "avg_pool2d padded");
}

TEST_CASE("avg_pool2d backward spreads each gradient over its window", "[pool]") {
  const Tensor x = plane4x4().requires_grad_();
  avg_pool2d(x, 3, 2, 1).backward(from_vector<float>({9, 18, 27, 36}, {1, 1, 2, 2}));
  // each output gives grad/9 to the real cells of its window; row/col 1 belongs to two windows
  expect_values(x.grad(), {1, 3, 2, 2, 4, 10, 6, 6, 3, 7, 4, 4, 3, 7, 4, 4}, 1e-6, "avg_pool2d backward");
}

TEST_CASE("pooling gradients pass gradcheck", "[pool][gradcheck]") {
  const Tensor x = distinct_values({2, 3, 7, 6});
  expect_gradcheck([](auto& in) { return max_pool2d(in[0], 2); }, {x}, "max_pool2d k2");
  expect_gradcheck([](auto& in) { return max_pool2d(in[0], 3, 2, 1); }, {x}, "max_pool2d k3 s2 p1");
  expect_gradcheck([](auto& in) { return max_pool2d(in[0], {3, 2}, {1, 2}, {1, 0}); }, {x}, "max_pool2d (3,2)");
  expect_gradcheck([](auto& in) { return avg_pool2d(in[0], 2); }, {x}, "avg_pool2d k2");
  expect_gradcheck([](auto& in) { return avg_pool2d(in[0], 3, 2, 1); }, {x}, "avg_pool2d k3 s2 p1");
  expect_gradcheck([](auto& in) { return avg_pool2d(in[0], {2, 3}, 1, {1, 1}); }, {x}, "avg_pool2d (2,3)");
  expect_gradcheck([](auto& in) { return global_avg_pool2d(in[0]); }, {x}, "global_avg_pool2d");
}

TEST_CASE("global_avg_pool2d is the mean of each plane", "[pool]") {
  const Tensor x = plane4x4();
  const Tensor y = global_avg_pool2d(x);
  CHECK(y.shape() == Shape{1, 1, 1, 1});
  expect_values(y, {72.0 / 16}, 1e-7, "global_avg_pool2d");
  const Tensor r = randn({3, 5, 7, 6});
  test::expect_close(global_avg_pool2d(r).reshape({3, 5}), mean(r.reshape({3, 5, 42}), 2), 1e-6,
                     "global_avg_pool2d vs mean");
}

TEST_CASE("pooling keeps f16 storage", "[pool][f16]") {
  const Tensor x = randn({2, 3, 6, 6});
  const Tensor x16 = x.to(kFloat16);
  const Tensor m = max_pool2d(x16, 2);
  CHECK(m.dtype() == kFloat16);
  test::expect_close(m, max_pool2d(x16.to(kFloat32), 2), 0, "max_pool2d f16 (max is exact)");
  // the mean of 4 f16 values in f32, rounded once to f16: 2^-11 relative
  test::expect_close(avg_pool2d(x16, 2), avg_pool2d(x16.to(kFloat32), 2), 1e-3, "avg_pool2d f16");
}

TEST_CASE("pooling errors name the op and the shapes", "[pool][errors]") {
  expect_error_contains([] { max_pool2d(zeros({1, 1, 4, 4}), 2, 2, 2); },
                        {"max_pool2d", "padding", "(2, 2)", "half the kernel", "[1, 1, 4, 4]"});
  expect_error_contains([] { avg_pool2d(zeros({1, 4, 4}), 2); }, {"avg_pool2d", "[N, C, H, W]", "[1, 4, 4]"});
  expect_error_contains([] { max_pool2d(zeros({1, 1, 2, 2}), 3); },
                        {"max_pool2d", "bigger than the padded input", "[1, 1, 2, 2]"});
  expect_error_contains([] { avg_pool2d(zeros({1, 1, 4, 4}), 2, 0); }, {"avg_pool2d", "stride", "(0, 0)"});
  expect_error_contains([] { global_avg_pool2d(zeros({2, 3})); }, {"global_avg_pool2d", "[2, 3]"});
}
