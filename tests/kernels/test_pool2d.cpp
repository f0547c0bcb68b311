// Pooling: max and average forward against hand-computed values (stride unequal
// to the kernel, padding, count_include_pad, ceil_mode), max's gradient routing (ties,
// overlapping windows, padding, NaN) recomputed from x without indices, the shared
// argmax rule (kernels/pool_math.h), gradcheck on inputs without ties, global
// average pooling, f16, the memory max pooling allocates, errors.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "kernels/pool_math.h"
#include "kernels/softmax_math.h"
#include "memory/memory.h"
#include "models/pooling.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

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

TEST_CASE("pooling matches a direct reference, ties and gradient routing included", "[pool]") {
  struct Case {
    int64_t h, w;
    Size2 kernel, stride, padding;
  };
  // 6x35 and 4x64: rows of 17 and 32 disjoint 2x2 windows, past a vector's width (f32 and f64)
  const std::vector<Case> cases = {{8, 8, 2, 2, 0},  {7, 9, 2, 2, 0},         {6, 35, 2, 2, 0},  {4, 64, 2, 2, 0},
                                   {7, 5, 3, 2, 1},  {6, 7, 2, 1, 1},         {5, 8, {3, 2}, {1, 2}, {1, 0}},
                                   {9, 6, 3, 3, 0},  {4, 4, 4, 4, 2}};
  manual_seed(41);
  for (const DType dtype : {kFloat64, kFloat32})
  for (const Case& k : cases) {
    // values rounded to a coarse grid: windows with ties, which must resolve to the first maximum
    const Tensor x = sqrt(rand({2, 3, k.h, k.w}, kFloat64, 0.0, 16.0));
    std::vector<double> xs = x.to_vector<double>();
    for (double& v : xs) v = std::floor(v);
    const Tensor xr = from_vector<double>(xs, x.shape()).to(dtype);  // small integers: exact in f32
    const kernels::Pool2dArgs args{k.kernel, k.stride, k.padding};
    const Tensor mx = kernels::max_pool2d(xr, args);
    const Tensor av = kernels::avg_pool2d(xr, args);
    const int64_t oh_n = mx.size(2), ow_n = mx.size(3);
    // dy: distinct integers, so every sum of them in dx is exact and names its outputs
    std::vector<double> dys(static_cast<size_t>(mx.numel()));
    for (size_t i = 0; i < dys.size(); ++i) dys[i] = static_cast<double>(i + 1);
    std::vector<double> want_max, want_avg, want_dx(xs.size(), 0.0);
    for (int64_t p = 0; p < 6; ++p)
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          double best = -1e300, sum = 0;
          int64_t at = -1;
          for (int64_t i = 0; i < k.kernel.h; ++i)
            for (int64_t j = 0; j < k.kernel.w; ++j) {
              const int64_t h = oh * k.stride.h - k.padding.h + i, w = ow * k.stride.w - k.padding.w + j;
              if (h < 0 || h >= k.h || w < 0 || w >= k.w) continue;
              const double v = xs[static_cast<size_t>(p * k.h * k.w + h * k.w + w)];
              sum += v;
              if (v > best) {
                best = v;
                at = h * k.w + w;
              }
            }
          want_max.push_back(best);
          want_dx[static_cast<size_t>(p * k.h * k.w + at)] += dys[want_max.size() - 1];
          // floor mode with padding <= kernel/2: every window spans the full kernel of the padded input
          want_avg.push_back(sum / static_cast<double>(k.kernel.h * k.kernel.w));
        }
    const std::string label = std::string(dtype_name(dtype)) + " pool " + std::to_string(k.h) + "x" + std::to_string(k.w) + " kernel (" +
                              std::to_string(k.kernel.h) + "," + std::to_string(k.kernel.w) + ")";
    expect_values(mx, want_max, 0, "max_" + label);
    // backward recomputes each window's first maximum from x and routes its dy there
    expect_values(kernels::max_pool2d_backward(from_vector<double>(dys, mx.shape()).to(dtype), xr, args), want_dx, 0,
                  "max_" + label + " backward");
    // the mean of at most 16 values in [0, 4) (exact sums), divided once: half an ulp of 4 in f32
    expect_values(av, want_avg, dtype == kFloat32 ? 2.0 * std::numeric_limits<float>::epsilon() : 1e-12, "avg_" + label);
  }
}

TEST_CASE("max_pool2d picks the first NaN of a window wherever it is", "[pool]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // 2x4 plane, two 2x2 windows: the left one has a NaN last, the right one two NaNs
  const Tensor x = from_vector<float>({1, 2, 5, nan, 3, nan, nan, 0}, {1, 1, 2, 4});
  const kernels::Pool2dArgs args{2, 2, 0};
  const Tensor y = kernels::max_pool2d(x, args);
  const std::vector<double> ys = y.to_vector<double>();
  CHECK(std::isnan(ys[0]));
  CHECK(std::isnan(ys[1]));
  // the gradient goes to the NaN backward finds again: offsets 5 and 3
  expect_values(kernels::max_pool2d_backward(from_vector<float>({10, 20}, {1, 1, 1, 2}), x, args),
                {0, 0, 0, 20, 0, 10, 0, 0}, 0, "max_pool2d NaN positions");
}

TEST_CASE("max_pool2d's f32 rows of eight windows and more find NaNs where the scalar rule does", "[pool]") {
  // planes whose rows take the eight-window vectors (4x20: an overlapping last group; 8x8 and
  // 6x14: rows of four and seven windows that spill onto the rows below), NaNs scattered
  const float nan = std::numeric_limits<float>::quiet_NaN();
  manual_seed(43);
  for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{{4, 20}, {8, 8}, {6, 14}}) {
    std::vector<float> xs = rand({2, 3, h, w}, kFloat32, -4.0, 4.0).to_vector<float>();
    for (size_t i = 0; i < xs.size(); i += 7) xs[i] = nan;
    const Tensor x = from_vector<float>(xs, {2, 3, h, w});
    const kernels::Pool2dArgs args{2, 2, 0};
    const Tensor y = kernels::max_pool2d(x, args);
    const int64_t oh_n = h / 2, ow_n = w / 2;
    std::vector<double> dys(static_cast<size_t>(y.numel())), want_dx(xs.size(), 0.0);
    for (size_t i = 0; i < dys.size(); ++i) dys[i] = static_cast<double>(i + 1);
    const std::vector<double> got = y.to_vector<double>();
    for (int64_t p = 0; p < 6; ++p)
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          const auto m = kernels::window_argmax<float>(xs.data() + p * h * w, w, 2 * oh, 2 * oh + 2, 2 * ow, 2 * ow + 2);
          const size_t at = static_cast<size_t>((p * oh_n + oh) * ow_n + ow);
          INFO(h << "x" << w << " plane " << p << " window (" << oh << ", " << ow << ")");
          CHECK((std::isnan(m.value) ? std::isnan(got[at]) : got[at] == m.value));
          want_dx[static_cast<size_t>(p * h * w + m.at)] = dys[at];
        }
    expect_values(kernels::max_pool2d_backward(from_vector<double>(dys, y.shape()).to(kFloat32), x, args), want_dx, 0,
                  "max_pool2d backward with NaNs " + std::to_string(h) + "x" + std::to_string(w));
  }
}

TEST_CASE("window_argmax: first maximum, first NaN, the rule of max_takes", "[pool]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // one 3x4 plane; windows are sub-rectangles of it
  const std::vector<float> plane = {1, 7, 7, 2,   //
                                    7, 0, -0.0f, 3,  //
                                    nan, 5, nan, inf};
  auto at = [&](int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
    return kernels::window_argmax<float>(plane.data(), 4, h0, h1, w0, w1).at;
  };
  CHECK(at(0, 2, 0, 3) == 1);   // 7 at (0,1), (0,2), (1,0): row by row, the first wins
  CHECK(at(0, 2, 2, 4) == 2);   // 7 beats 2, 3 and -0
  CHECK(at(1, 2, 1, 3) == 5);   // 0 and -0 tie: the first
  CHECK(at(1, 2, 2, 3) == 6);   // a one-element window
  CHECK(at(0, 3, 0, 4) == 8);   // the first NaN, though inf and a later NaN follow
  CHECK(at(2, 3, 1, 4) == 10);  // NaN beats inf after it
  CHECK(at(1, 3, 3, 4) == 11);  // inf beats 3
  CHECK(std::isnan(kernels::window_argmax<float>(plane.data(), 4, 0, 3, 0, 4).value));
  // pool_takes is max_takes (kernels/softmax_math.h) without short-circuits: same verdicts
  const std::vector<double> values = {-inf, -1.5, -0.0, 0.0, 2.0, inf, nan};
  for (double v : values)
    for (double cur : values) {
      INFO("v " << v << " cur " << cur);
      CHECK(kernels::pool_takes(v, cur) == kernels::max_takes(v, cur));
    }
  // pool_argmax clamps the window: with padding 1, output (0, 0) of a 3x4 plane covers rows
  // 0..1 and columns 0..1 only (padding never wins, even over negative values)
  kernels::Conv2dGeometry g;
  g.in_h = 3, g.in_w = 4, g.kernel_h = 3, g.kernel_w = 3, g.stride_h = 2, g.stride_w = 2, g.pad_h = 1, g.pad_w = 1;
  const std::vector<float> negative = {-5, -4, -1, -9, -3, -6, -7, -8, -2, -10, -11, -12};
  CHECK(kernels::pool_argmax<float>(g, negative.data(), 0, 0).at == 4);  // -3: the best of -5, -4, -3, -6
  CHECK(kernels::pool_argmax<float>(g, negative.data(), 0, 1).at == 2);  // -1 in columns 1..3
}

TEST_CASE("max_pool2d ties: a constant plane sends every gradient to each window's first element", "[pool]") {
  // 4x5 plane of 3s; kernel 3, stride 1, padding 1: 4x5 overlapping windows, clamped at the border
  const Tensor x = full({1, 1, 4, 5}, 3.0).requires_grad_();
  const Tensor y = max_pool2d(x, 3, 1, 1);
  CHECK(y.shape() == Shape{1, 1, 4, 5});
  y.backward(ones({1, 1, 4, 5}));
  // output (oh, ow)'s window starts at (max(oh - 1, 0), max(ow - 1, 0)): the first element
  // of each; (0, 0) is first for outputs oh, ow in {0, 1} x {0, 1}
  expect_values(x.grad(), {4, 2, 2, 2, 0,  //
                           2, 1, 1, 1, 0,  //
                           2, 1, 1, 1, 0,  //
                           0, 0, 0, 0, 0},
                0, "max_pool2d constant plane backward");
}

TEST_CASE("max_pool2d overlapping windows add their gradients in a fixed order", "[pool]") {
  // stride < kernel: one maximum shared by many windows. The sum is the same, bit for bit,
  // on every run and whatever the thread count (each plane is walked serially).
  manual_seed(7);
  const Tensor x = randn({3, 4, 9, 9});
  const kernels::Pool2dArgs args{3, 1, 1};
  const Tensor dy = randn({3, 4, 9, 9});
  const Tensor first = kernels::max_pool2d_backward(dy, x, args);
  for (int run = 0; run < 3; ++run) expect_close(kernels::max_pool2d_backward(dy, x, args), first, 0, "rerun");
  // and it equals the f64 sum of the same dy values, up to f32 rounding: an element is the maximum
  // of at most 9 windows, so it sums at most 9 of them (their magnitude: the same routing of |dy|)
  const Tensor dy64 = dy.to(kFloat64), x64 = x.to(kFloat64);
  test::expect_within(first, kernels::max_pool2d_backward(dy64, x64, args),
                      test::sum_error_bound(9, kFloat32, kernels::max_pool2d_backward(abs(dy64), x64, args)),
                      "max_pool2d overlapping backward f32 vs f64");
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
  // The window sums are small integers (exact); dividing by 4 is exact, by 9 one rounding.
  const Tensor x = plane4x4();
  expect_values(avg_pool2d(x, 2), {13.0 / 4, 17.0 / 4, 23.0 / 4, 19.0 / 4}, 0, "avg_pool2d 2x2");
  expect_values(avg_pool2d(x, 2, 1),
                {13.0 / 4, 19.0 / 4, 17.0 / 4, 22.0 / 4, 20.0 / 4, 12.0 / 4, 23.0 / 4, 29.0 / 4, 19.0 / 4}, 0,
                "avg_pool2d k2 s1");
  // kernel 3, stride 2, padding 1: windows rows/cols {-1..1} and {1..3}; the divisor is 9 everywhere
  // (count_include_pad): top-left sums x[0..1][0..1] = 13, top-right x[0..1][1..3] = 26,
  // bottom-left x[1..3][0..1] = 30, bottom-right x[1..3][1..3] = 58.
  expect_values(avg_pool2d(x, 3, 2, 1), {13.0 / 9, 26.0 / 9, 30.0 / 9, 58.0 / 9}, test::unit_roundoff(kFloat32),
                "avg_pool2d padded");
}

TEST_CASE("count_include_pad=false divides by the input elements of each window", "[pool]") {
  // The windows of kernel 3, stride 2, padding 1 above hold 4, 6, 6 and 9 input elements
  // (PyTorch's AvgPool2d(3, 2, 1, count_include_pad=False)); dividing by 4 is exact, by 6 and 9 one rounding.
  const Tensor x = plane4x4();
  expect_values(avg_pool2d(x, 3, 2, 1, false, false), {13.0 / 4, 26.0 / 6, 30.0 / 6, 58.0 / 9},
                test::unit_roundoff(kFloat32), "avg_pool2d count_include_pad=false");
  const Tensor g = distinct_values({2, 3, 7, 6});
  expect_gradcheck([](auto& in) { return avg_pool2d(in[0], 3, 2, 1, false, false); }, {g}, "avg without padding");
}

TEST_CASE("ceil_mode: PyTorch's output size, windows clipped at the edge", "[pool]") {
  // 4x4, kernel 3, stride 2: floor((4 - 3) / 2) + 1 = 1 output per side, ceil 2. The second window
  // covers rows (cols) 2..3 only; with count_include_pad its divisor is clipped to the input and
  // padding too (PyTorch: min(start + kernel, size + pad) - start = 2): 9, 6, 6 and 4.
  const Tensor x = plane4x4();
  expect_values(max_pool2d(x, 3, 2, 0, 1, true), {9, 8, 11, 12}, 0, "max_pool2d ceil_mode");
  expect_values(avg_pool2d(x, 3, 2, 0, true), {37.0 / 9, 14.0 / 6, 32.0 / 6, 19.0 / 4},
                test::unit_roundoff(kFloat32), "avg_pool2d ceil_mode");
  CHECK(max_pool2d(x, 3, 2).shape() == Shape{1, 1, 1, 1});
  // The last window must start inside the input or its left padding: 5 wide, kernel 2, stride 2,
  // padding 1 gives ceil((5 + 2 - 2) / 2) + 1 = 4 windows, of which the 4th would start at
  // 3 * 2 - 1 = 5, past the input: 3 remain (PyTorch's pooling_output_shape). 6 wide, kernel 3,
  // padding 1: 4 with ceil_mode, 3 without.
  CHECK(max_pool2d(zeros({1, 1, 5, 5}), 2, 2, 1, 1, true).shape() == Shape{1, 1, 3, 3});
  CHECK(avg_pool2d(zeros({1, 1, 6, 6}), 3, 2, 1, true).shape() == Shape{1, 1, 4, 4});
  CHECK(avg_pool2d(zeros({1, 1, 6, 6}), 3, 2, 1).shape() == Shape{1, 1, 3, 3});
  const Tensor g = distinct_values({2, 3, 7, 6});
  expect_gradcheck([](auto& in) { return max_pool2d(in[0], 2, 2, 0, 1, true); }, {g}, "max_pool2d ceil_mode");
  expect_gradcheck([](auto& in) { return avg_pool2d(in[0], 3, 2, 1, true, false); }, {g}, "avg_pool2d ceil_mode");
  // The layers take libtorch's options.
  nn::AvgPool2d pool(nn::AvgPool2dOptions(3).stride(2).ceil_mode(true));
  expect_values(pool.forward(x), {37.0 / 9, 14.0 / 6, 32.0 / 6, 19.0 / 4}, test::unit_roundoff(kFloat32),
                "AvgPool2d ceil_mode");
  CHECK(pool.str() == "AvgPool2d(kernel=(3, 3), stride=(2, 2), padding=(0, 0), ceil_mode=true)");
  CHECK(nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).ceil_mode(true)).forward(x).shape() == Shape{1, 1, 2, 2});
}

TEST_CASE("avg_pool2d backward spreads each gradient over its window", "[pool]") {
  const Tensor x = plane4x4().requires_grad_();
  avg_pool2d(x, 3, 2, 1).backward(from_vector<float>({9, 18, 27, 36}, {1, 1, 2, 2}));
  // each output gives grad/9 to the real cells of its window; row/col 1 belongs to two windows.
  // Exact: 9/9, 18/9, 27/9, 36/9 are whole numbers, and so are their sums.
  expect_values(x.grad(), {1, 3, 2, 2, 4, 10, 6, 6, 3, 7, 4, 4, 3, 7, 4, 4}, 0, "avg_pool2d backward");
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
  expect_values(y, {72.0 / 16}, 0, "global_avg_pool2d");  // a sum of small integers over 16: exact
  // Two means of 42 values, each a sum of 42 and a division: within gamma(2 * 43) of the mean of |r|.
  const Tensor r = randn({3, 5, 7, 6});
  test::expect_within(global_avg_pool2d(r).reshape({3, 5}), mean(r.reshape({3, 5, 42}), 2),
                      test::sum_error_bound(2 * 43, kFloat32, mean(abs(r.to(kFloat64)).reshape({3, 5, 42}), 2)),
                      "global_avg_pool2d vs mean");
}

TEST_CASE("pooling keeps f16 storage", "[pool][f16]") {
  const Tensor x = randn({2, 3, 6, 6});
  const Tensor x16 = x.to(kFloat16);
  const Tensor m = max_pool2d(x16, 2);
  CHECK(m.dtype() == kFloat16);
  test::expect_close(m, max_pool2d(x16.to(kFloat32), 2), 0, "max_pool2d f16 (max is exact)");
  // backward: the argmax is found in f16 storage like forward; without overlap each dx element
  // receives at most one dy, so the f16 gradient is exact
  const Tensor dy16 = randn({2, 3, 3, 3}).to(kFloat16);
  const kernels::Pool2dArgs k2{2, 2, 0};
  const Tensor dx16 = kernels::max_pool2d_backward(dy16, x16, k2);
  CHECK(dx16.dtype() == kFloat16);
  test::expect_close(dx16, kernels::max_pool2d_backward(dy16.to(kFloat32), x16.to(kFloat32), k2), 0,
                     "max_pool2d_backward f16 (one dy per element)");
  // overlapping windows: each add is rounded to f16 (the scatter stores into dx: a sum kept in
  // f16 by design), so a sum of up to 9 values makes 8 f16 roundings, each possibly subnormal,
  // where the f32 side makes 8 f32 ones; both relative to the sum of |dy| routed the same way
  const kernels::Pool2dArgs k3{3, 1, 1};
  const Tensor dy_overlap = randn({2, 3, 6, 6}).to(kFloat16);
  std::vector<double> overlap_bound =
      kernels::max_pool2d_backward(abs(dy_overlap.to(kFloat64)), x16.to(kFloat64), k3).to_vector<double>();
  for (double& b : overlap_bound)
    b = (test::gamma(8, kFloat16) + test::gamma(8, kFloat32)) * b + 8 * test::underflow_error(kFloat16);
  test::expect_within(kernels::max_pool2d_backward(dy_overlap, x16, k3),
                      kernels::max_pool2d_backward(dy_overlap.to(kFloat32), x16.to(kFloat32), k3).to_vector<double>(),
                      overlap_bound, "max_pool2d_backward f16 overlapping");
  // the mean of 4 f16 values in f32 on both sides (a sum of 4 and an exact division by 4), rounded
  // once to f16 on one
  test::expect_within(avg_pool2d(x16, 2), avg_pool2d(x16.to(kFloat32), 2),
                      test::sum_error_bound(2 * 4, kFloat16, avg_pool2d(abs(x16.to(kFloat64)), 2)), "avg_pool2d f16");
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

TEST_CASE("max_pool2d_backward checks dy against x and the args, naming them", "[pool][errors]") {
  const kernels::Pool2dArgs args{2, 2, 0};
  const Tensor x = randn({1, 2, 4, 4});
  expect_error_contains([&] { kernels::max_pool2d_backward(ones({1, 2, 3, 2}), x, args); },
                        {"max_pool2d_backward", "gradient", "[1, 2, 3, 2]", "[1, 2, 2, 2]"});
  expect_error_contains([&] { kernels::max_pool2d_backward(ones({1, 2, 2, 2}, kFloat64), x, args); },
                        {"max_pool2d_backward"});
  expect_error_contains([&] { kernels::max_pool2d_backward(ones({1, 2, 2, 2}), randn({2, 4, 4}), args); },
                        {"max_pool2d_backward", "[2, 4, 4]"});
  expect_error_contains([&] { kernels::max_pool2d_backward(ones({1, 2, 2, 2}), Tensor(), args); },
                        {"max_pool2d_backward", "x"});
  CHECK(kernels::max_pool2d_backward(ones({1, 2, 2, 2}), x, args).shape() == x.shape());
}

TEST_CASE("max_pool2d keeps no indices: forward allocates only y", "[pool][memory]") {
  // Forward used to allocate an i64 index per output (twice y's bytes in f32) and save it for
  // backward; now the node saves x, which is alive anyway, and backward recomputes the argmax.
  const Tensor x = randn({8, 16, 32, 32}).requires_grad_();
  for (DType dtype : {kFloat32, kFloat16}) {
    INFO(dtype_name(dtype));
    const Tensor xd = dtype == kFloat32 ? x : x.to(dtype).detach().requires_grad_();
    const MemoryStats before = memory_stats(kCPU);
    Tensor y = max_pool2d(xd, 2);
    const MemoryStats after = memory_stats(kCPU);
    CHECK(y.shape() == Shape{8, 16, 16, 16});
    CHECK(after.allocation_count.allocated - before.allocation_count.allocated == 1);
    CHECK(after.requested_bytes.allocated - before.requested_bytes.allocated == static_cast<int64_t>(y.nbytes()));
    CHECK(after.allocated_bytes.current - before.allocated_bytes.current <= static_cast<int64_t>(y.nbytes()) + 512);
    // backward allocates dx (and the seed gradient), no index tensor was ever made
    y.backward(ones_like(y));
    CHECK(xd.grad().shape() == xd.shape());
  }
}
