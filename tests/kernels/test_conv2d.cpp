// conv2d: forward against a direct fp64 convolution, gradients by gradcheck and
// against direct fp64 formulas (tests/support/conv2d_reference.h), under every CPU algorithm,
// the shared CUDA index math (im2col_source, col2im_gather) against the CPU kernels, f16,
// empty batches and error messages. The direct convolution's instruction sets and
// Winograd's error bounds on the zoo's layers: test_conv2d_algorithms.cpp.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "kernels/conv_geometry.h"
#include "kernels/cpu/conv2d_direct.h"
#include "kernels/cpu/conv2d_winograd.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/ops.h"
#include "kernels/providers.h"
#include "tests/support/conv2d_reference.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

namespace {

// The configurations every test walks: strides 1/2, padding 0/1/2, dilation 1/2, odd and
// non-square sizes, batch 1 and 3, 1x1 kernels (with and without the pointwise shortcut).
const std::vector<ConvCase> kCases = {
    {1, 1, 5, 5, 1, 3, 3, 1, 0, 1},
    {3, 2, 7, 5, 4, 3, 3, 1, 1, 1},
    {3, 3, 7, 5, 2, 3, 2, 2, 1, 1},
    {2, 2, 9, 8, 3, 3, 3, 1, 2, 2},
    {3, 4, 6, 6, 5, 1, 1, 1, 0, 1},
    {2, 3, 6, 7, 2, 1, 1, 2, 0, 1},
    {1, 2, 8, 8, 3, 5, 5, 1, 2, 1},
    {3, 2, 7, 9, 3, 3, 3, {2, 1}, {0, 2}, {1, 2}},
    {2, 4, 6, 5, 3, 3, 3, 1, 1, 1},  // "same" convolutions with OC <= C: dx through the flipped-weight
    {1, 3, 7, 7, 2, 5, 5, 1, 2, 1},  // forward convolution instead of col2im
    // 3x3, stride 1: Winograd's geometry (EMBER_CPU_CONV=winograd): odd outputs (a half tile
    // at the edge), no padding, padding 2 (tiles wholly in the padding), more channels out than in
    {2, 5, 7, 6, 3, 3, 3, 1, 0, 1},
    {2, 3, 8, 9, 4, 3, 3, 1, 2, 1},
    {3, 2, 5, 5, 6, 3, 3, 1, 1, 1},
    {1, 1, 3, 3, 1, 3, 3, 1, 1, 1},
    // four tiles wide, two rows of tiles per vector: 7x7 outputs (4x4 tiles), and 5x8 (3 rows:
    // the last one alone)
    {2, 2, 9, 9, 3, 3, 3, 1, 0, 1},
    {2, 3, 5, 8, 4, 3, 3, 1, 1, 1},
    // planes 13 and 18 tiles wide: two and three vector steps a tile row, the last one mostly
    // past the row, written straight into the plane where the rows below take its spill
    {1, 2, 7, 25, 3, 3, 3, 1, 1, 1},
    {1, 2, 5, 35, 2, 3, 3, 1, 1, 1},
    // stride 2 with rows of >= 4 outputs (im2col's eight- and four-at-a-time copies): 11 wide (the
    // last eight overlapping), 10 wide through a 1x1 kernel, 8 wide unpadded, reading each row's
    // last element, and 7 wide (two overlapping fours, as ResNet-20's 14 -> 7 layer)
    {2, 3, 17, 22, 4, 3, 3, 2, 1, 1},
    {2, 3, 19, 19, 2, 1, 1, 2, 0, 1},
    {1, 2, 9, 17, 3, 3, 3, 2, 0, 1},
    {2, 2, 13, 14, 3, 3, 3, 2, 1, 1},
    // strided im2col taking a tap's rows from the tap whose rows are one output row on, or one
    // output column on: stride 2 with dilation 2 (every tap from the one above, or to its left),
    // 5x5 at stride 3 (taps 3 and 4 from 0 and 1, down and across)
    {2, 2, 11, 10, 3, 3, 3, 2, 2, 2},
    {1, 2, 13, 12, 2, 5, 5, 3, 1, 1},
    // 16 channels in and out, where auto runs Winograd: an 8x28 output (whole 4x4 tiles, seven a
    // row: F(4x4)) and 8x8 and 6x6 ones (F(2x2))
    {1, 16, 8, 28, 16, 3, 3, 1, 1, 1},
    {1, 16, 8, 8, 16, 3, 3, 1, 1, 1},
    {1, 16, 6, 6, 16, 3, 3, 1, 1, 1},
    // four tiles wide, four rows of tiles per vector (AVX-512: Float16Quads): 14x14 outputs
    // (F(4x4); 16 channels, as auto runs ResNet-20's stage 2), 29x13 (two steps down the plane,
    // the last tile row one output row deep, three columns clipped) and 15x7 (F(2x2), two steps);
    // and 25x27 (F(4x4), 7 x 7 tiles a plane, clipped at the bottom and the right)
    {2, 3, 14, 14, 4, 3, 3, 1, 1, 1},
    {1, 16, 14, 14, 16, 3, 3, 1, 1, 1},
    {1, 2, 31, 15, 3, 3, 3, 1, 0, 1},
    {2, 2, 17, 9, 3, 3, 3, 1, 0, 1},
    {2, 2, 25, 27, 3, 3, 3, 1, 1, 1},
};

// The CPU's convolution algorithms (kernels/providers.h); every forward and gradient test runs each.
// (direct is f32 only and needs AVX2: elsewhere it falls back to im2col, which the tests then see.)
const kernels::CpuConvAlgorithm kAlgorithms[] = {kernels::CpuConvAlgorithm::automatic, kernels::CpuConvAlgorithm::im2col,
                                                 kernels::CpuConvAlgorithm::winograd, kernels::CpuConvAlgorithm::winograd4,
                                                 kernels::CpuConvAlgorithm::direct};

}  // namespace

TEST_CASE("conv2d forward matches a direct fp64 convolution", "[conv2d]") {
  manual_seed(1);
  for (const kernels::CpuConvAlgorithm algorithm : kAlgorithms)
  for (const ConvCase& k : kCases) {
    const kernels::CpuConvScope scope(algorithm);
    INFO("EMBER_CPU_CONV=" << kernels::cpu_conv_algorithm_name(algorithm));
    for (DType dtype : {kFloat32, kFloat64}) {
      const ConvInputs in = make_inputs(k, dtype);
      const Tensor y = conv2d(in.x, in.w, in.b, k.stride, k.padding, k.dilation);
      CHECK(y.dtype() == dtype);
      test::expect_within(y, reference_conv(k, in.x, in.w, in.b), forward_bound(k, algorithm, dtype, in, true),
                          describe(k) + " with bias");
      test::expect_within(conv2d(in.x, in.w, Tensor(), k.stride, k.padding, k.dilation),
                          reference_conv(k, in.x, in.w, Tensor()), forward_bound(k, algorithm, dtype, in, false),
                          describe(k) + " without bias");
    }
  }
}

TEST_CASE("conv2d forward on a hand-computed 3x3 example", "[conv2d]") {
  // x = 1..9 in a 3x3 plane, a 2x2 kernel of ones with padding 1: each output sums the window.
  const Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  const Tensor w = ones({1, 1, 2, 2});
  const Tensor b = from_vector<float>({0.5f}, {1});
  test::expect_values(conv2d(x, w, b, 1, 0), {12.5, 16.5, 24.5, 28.5}, 0, "conv2d 2x2 ones");
  test::expect_values(conv2d(x, w, Tensor(), 2, 1), {1, 5, 11, 28}, 0, "conv2d stride 2 padding 1");
}

TEST_CASE("conv2d gradients pass gradcheck", "[conv2d][gradcheck]") {
  manual_seed(2);
  const std::vector<ConvCase> small = {
      {2, 2, 5, 4, 3, 3, 3, 1, 1, 1},
      {3, 2, 6, 5, 2, 3, 2, 2, 1, 2},           // stride + padding + dilation
      {2, 3, 4, 4, 2, 1, 1, 1, 0, 1},           // pointwise shortcut
      {2, 3, 5, 4, 3, 3, 3, 1, 1, 1},           // "same" with OC <= C: dx as a flipped-weight convolution
      {1, 2, 7, 6, 2, 2, 3, {2, 1}, {1, 0}, 1},  // per-axis arguments
      {2, 2, 5, 5, 4, 3, 3, 1, 1, 1},           // "same" with OC > C: dx as a flipped convolution under Winograd
      {1, 16, 4, 28, 16, 3, 3, 1, 1, 1},        // 16 channels, a row of seven 4x4 tiles: auto's F(4x4)
  };
  for (const kernels::CpuConvAlgorithm algorithm : kAlgorithms)
  for (const ConvCase& k : small) {
    const kernels::CpuConvScope scope(algorithm);
    INFO("EMBER_CPU_CONV=" << kernels::cpu_conv_algorithm_name(algorithm));
    const ConvInputs in = make_inputs(k, kFloat64);
    expect_gradcheck(
        [&](auto& t) { return conv2d(t[0], t[1], t[2], k.stride, k.padding, k.dilation); }, {in.x, in.w, in.b},
        describe(k));
  }
}

TEST_CASE("conv2d gradients match direct fp64 formulas on a batch split over threads", "[conv2d]") {
  manual_seed(3);
  for (const kernels::CpuConvAlgorithm algorithm : kAlgorithms)
  // (then stride-2 rows of 11, 10 and 7 outputs, which col2im adds eight and four at a time, and
  // 16 channels, where auto runs Winograd F(4x4): seven tiles a row, and four rows of four)
  for (const ConvCase& k : {ConvCase{7, 3, 9, 8, 4, 3, 3, 2, 1, 1}, ConvCase{7, 3, 9, 8, 4, 3, 3, 1, 1, 1},
                            ConvCase{3, 3, 20, 21, 4, 3, 3, 2, 1, 1}, ConvCase{3, 2, 10, 19, 3, 1, 1, 2, 0, 1},
                            ConvCase{3, 2, 13, 14, 3, 3, 3, 2, 1, 1}, ConvCase{7, 16, 8, 28, 16, 3, 3, 1, 1, 1},
                            ConvCase{5, 16, 14, 14, 16, 3, 3, 1, 1, 1}}) {
  const kernels::CpuConvScope scope(algorithm);
  INFO("EMBER_CPU_CONV=" << kernels::cpu_conv_algorithm_name(algorithm) << ", " << describe(k));
  const ConvInputs in = make_inputs(k, kFloat32);
  const Tensor x = in.x.clone().requires_grad_(), w = in.w.clone().requires_grad_(), b = in.b.clone().requires_grad_();
  const Tensor y = conv2d(x, w, b, k.stride, k.padding, k.dilation);
  const Tensor dy = randn(y.shape());
  y.backward(dy);
  // The batch of 7 images is split over the threads: each weight gradient entry sums 7 x OH x OW
  // products in an order that depends on the split and on the BLAS's kernels.
  const ConvGrads want = reference_grads(k, algorithm, kFloat32, in.x, in.w, dy);
  test::expect_within(x.grad(), want.dx, want.dx_bound, "conv2d dx");
  test::expect_within(w.grad(), want.dw, want.dw_bound, "conv2d dweight");
  test::expect_within(b.grad(), want.db, want.db_bound, "conv2d dbias");
  }
}

// The direct convolution (kernels/cpu/conv2d_direct.h) under every instruction set this CPU
// has: its tiles pad the output channels, the taps and the wide pixels, so the cases cover
// counts on both sides of each tile (1..17 channels, 1..150 taps, widths 3..28) and LeNet-5's layers.
TEST_CASE("conv2d's shared im2col/col2im index math agrees with the CPU kernels", "[conv2d]") {
  manual_seed(4);
  for (const ConvCase& k : kCases) {
    const ConvInputs in = make_inputs(k, kFloat64);
    const kernels::Conv2dArgs args{k.stride, k.padding, k.dilation};
    const kernels::Conv2dGeometry g = kernels::conv2d_geometry(in.x.shape(), in.w.shape(), args, "conv2d");
    const std::vector<double> xs = in.x.to_vector<double>(), ws = in.w.to_vector<double>();
    const int64_t rows = g.col_rows(), cols = g.col_cols(), image = g.in_channels * g.in_plane();
    // forward through im2col_source: y[n] = W * cols[n]
    std::vector<double> y(static_cast<size_t>(g.batch * g.out_channels * cols), 0.0), colm(static_cast<size_t>(rows * cols));
    const Tensor dy = randn({g.batch, g.out_channels, g.out_h, g.out_w}, kFloat64);
    const std::vector<double> gs = dy.to_vector<double>();
    std::vector<double> dx(xs.size(), 0.0), dcols(static_cast<size_t>(rows * cols));
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t p = 0; p < cols; ++p) {
          const int64_t src = kernels::im2col_source(g, r, p);
          colm[static_cast<size_t>(r * cols + p)] = src < 0 ? 0.0 : xs[static_cast<size_t>(n * image + src)];
        }
      for (int64_t o = 0; o < g.out_channels; ++o)
        for (int64_t p = 0; p < cols; ++p)
          for (int64_t r = 0; r < rows; ++r)
            y[static_cast<size_t>((n * g.out_channels + o) * cols + p)] +=
                ws[static_cast<size_t>(o * rows + r)] * colm[static_cast<size_t>(r * cols + p)];
      // input gradient through col2im_gather: dcols = W^T dy[n]
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t p = 0; p < cols; ++p) {
          double s = 0.0;
          for (int64_t o = 0; o < g.out_channels; ++o)
            s += ws[static_cast<size_t>(o * rows + r)] * gs[static_cast<size_t>((n * g.out_channels + o) * cols + p)];
          dcols[static_cast<size_t>(r * cols + p)] = s;
        }
      for (int64_t c = 0; c < g.in_channels; ++c)
        for (int64_t ih = 0; ih < g.in_h; ++ih)
          for (int64_t iw = 0; iw < g.in_w; ++iw)
            dx[static_cast<size_t>(n * image + (c * g.in_h + ih) * g.in_w + iw)] =
                kernels::col2im_gather<double, double>(g, dcols.data(), c, ih, iw);
    }
    test::expect_values(kernels::conv2d(in.x, in.w, Tensor(), args), y, 1e-12, describe(k) + " via im2col_source");
    test::expect_values(kernels::conv2d_backward_input(dy, in.w, in.x.shape(), args), dx, 1e-12,
                        describe(k) + " via col2im_gather");
  }
}

TEST_CASE("conv2d computes f16 in f32", "[conv2d][f16]") {
  manual_seed(5);
  const ConvCase k{2, 3, 6, 6, 4, 3, 3, 1, 1, 1};
  const ConvInputs in = make_inputs(k, kFloat32);
  const Tensor x16 = in.x.to(kFloat16), w16 = in.w.to(kFloat16), b16 = in.b.to(kFloat16);
  const Tensor y16 = conv2d(x16, w16, b16, 1, 1);
  CHECK(y16.dtype() == kFloat16);
  // The same f16-rounded inputs computed in f32 both ways: the f16 run differs by its one rounding
  // of each result to f16 (u = 2^-11 of it), and the two f32 sums by at most twice their bound.
  const auto f16_bound = [](const Tensor& want, const std::vector<double>& f32_bound) {
    std::vector<double> bound = want.to_vector<double>();
    for (size_t i = 0; i < bound.size(); ++i) bound[i] = test::unit_roundoff(kFloat16) * std::fabs(bound[i]) + 2 * f32_bound[i];
    return from_vector<double>(bound, want.shape(), TensorOptions(kFloat64));
  };
  const Tensor y32 = conv2d(x16.to(kFloat32), w16.to(kFloat32), b16.to(kFloat32), 1, 1);
  const std::vector<double> y32_bound =
      forward_bound(k, kernels::CpuConvAlgorithm::im2col, kFloat32, {x16, w16, b16}, true).to_vector<double>();
  test::expect_within(y16, y32, f16_bound(y32, y32_bound), "conv2d f16");
  const Tensor xg = x16.clone().requires_grad_(), wg = w16.clone().requires_grad_();
  sum(conv2d(xg, wg, b16, 1, 1)).backward();
  CHECK(xg.grad().dtype() == kFloat16);
  CHECK(wg.grad().dtype() == kFloat16);
  const Tensor xf = x16.to(kFloat32).requires_grad_(), wf = w16.to(kFloat32).requires_grad_();
  sum(conv2d(xf, wf, b16.to(kFloat32), 1, 1)).backward();
  const ConvGrads f32 = reference_grads(k, kernels::CpuConvAlgorithm::im2col, kFloat32, x16, w16, ones(y32.shape()));
  test::expect_within(xg.grad(), xf.grad(), f16_bound(xf.grad(), f32.dx_bound), "conv2d f16 dx");
  test::expect_within(wg.grad(), wf.grad(), f16_bound(wf.grad(), f32.dw_bound), "conv2d f16 dweight");
}

TEST_CASE("conv2d handles an empty batch", "[conv2d]") {
  const Tensor x = zeros({0, 2, 5, 5}).requires_grad_();
  const Tensor w = randn({3, 2, 3, 3}).requires_grad_();
  const Tensor y = conv2d(x, w, Tensor(), 1, 0);
  CHECK(y.shape() == Shape{0, 3, 3, 3});
  sum(y).backward();
  CHECK(x.grad().shape() == Shape{0, 2, 5, 5});
  test::expect_values(w.grad(), std::vector<double>(54, 0.0), 0, "conv2d empty batch dweight");
}

TEST_CASE("conv2d errors name the op and the shapes", "[conv2d][errors]") {
  expect_error_contains([] { conv2d(zeros({1, 3, 5, 5}), zeros({2, 4, 3, 3})); },
                        {"conv2d", "[1, 3, 5, 5]", "[2, 4, 3, 3]", "channels"});
  expect_error_contains([] { conv2d(zeros({1, 1, 3, 3}), zeros({1, 1, 5, 5})); },
                        {"conv2d", "bigger than the padded input", "[1, 1, 3, 3]", "(5, 5)"});
  expect_error_contains([] { conv2d(zeros({1, 1, 3, 3}), zeros({1, 1, 3, 3}), Tensor(), 1, 0, 2); },
                        {"conv2d", "dilated", "[1, 1, 3, 3]"});
  expect_error_contains([] { conv2d(zeros({1, 2, 5, 5}), zeros({4, 2, 3, 3}), zeros({3})); },
                        {"conv2d", "bias", "[4]", "[3]"});
  expect_error_contains([] { conv2d(zeros({2, 5, 5}), zeros({4, 2, 3, 3})); }, {"conv2d", "[N, C, H, W]", "[2, 5, 5]"});
  expect_error_contains([] { conv2d(zeros({1, 2, 5, 5}), zeros({4, 2, 3, 3}), Tensor(), 0); },
                        {"conv2d", "stride", "(0, 0)"});
  expect_error_contains([] { conv2d(zeros({1, 2, 5, 5}), zeros({4, 2, 3, 3}, kFloat64)); },
                        {"conv2d", "dtype", "f32", "f64"});
}
