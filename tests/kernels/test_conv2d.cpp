// conv2d: forward against a direct fp64 convolution, gradients by gradcheck and
// against direct fp64 formulas, the shared CUDA index math (im2col_source,
// col2im_gather) against the CPU kernels, f16, empty batches and error messages.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <sstream>
#include <vector>

#include "kernels/conv_geometry.h"
#include "kernels/cpu/conv2d_direct.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/ops.h"
#include "kernels/providers.h"
#include <omp.h>
#include "tests/support/op_contract.h"

using namespace ember;
using test::expect_close;
using test::expect_error_contains;
using test::expect_gradcheck;

namespace {

struct ConvCase {
  int64_t n, c, h, w, oc, kh, kw;
  Size2 stride, padding, dilation;
};

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
};

// The CPU's convolution algorithms (kernels/providers.h); every forward and gradient test runs each.
// (direct is f32 only and needs AVX2: elsewhere it falls back to im2col, which the tests then see.)
const kernels::CpuConvAlgorithm kAlgorithms[] = {kernels::CpuConvAlgorithm::im2col, kernels::CpuConvAlgorithm::winograd,
                                                 kernels::CpuConvAlgorithm::direct};

Shape conv_out_shape(const ConvCase& k) {
  return Shape{k.n, k.oc, kernels::conv_out_size(k.h, k.kh, k.stride.h, k.padding.h, k.dilation.h),
               kernels::conv_out_size(k.w, k.kw, k.stride.w, k.padding.w, k.dilation.w)};
}

// Direct convolution in fp64: y[n][o][oh][ow] = b[o] + sum x[n][c][ih][iw] * w[o][c][kh][kw].
// Calls tap(n, o, c, kh, kw, oh, ow, ih, iw) for every product so the backward references reuse the loops.
template <class Tap>
void for_each_tap(const ConvCase& k, const Shape& out, const Tap& tap) {
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.oc; ++o)
      for (int64_t oh = 0; oh < out[2]; ++oh)
        for (int64_t ow = 0; ow < out[3]; ++ow)
          for (int64_t c = 0; c < k.c; ++c)
            for (int64_t kh = 0; kh < k.kh; ++kh)
              for (int64_t kw = 0; kw < k.kw; ++kw) {
                const int64_t ih = oh * k.stride.h - k.padding.h + kh * k.dilation.h;
                const int64_t iw = ow * k.stride.w - k.padding.w + kw * k.dilation.w;
                if (ih >= 0 && ih < k.h && iw >= 0 && iw < k.w) tap(n, o, c, kh, kw, oh, ow, ih, iw);
              }
}

int64_t at4(const Shape& s, int64_t a, int64_t b, int64_t c, int64_t d) { return ((a * s[1] + b) * s[2] + c) * s[3] + d; }

Tensor reference_conv(const ConvCase& k, const Tensor& x, const Tensor& w, const Tensor& b) {
  const Shape out = conv_out_shape(k);
  const std::vector<double> xs = x.to_vector<double>(), ws = w.to_vector<double>();
  std::vector<double> y(static_cast<size_t>(out.numel()), 0.0);
  if (b.defined()) {
    const std::vector<double> bs = b.to_vector<double>();
    for (int64_t i = 0; i < out.numel(); ++i) y[static_cast<size_t>(i)] = bs[static_cast<size_t>((i / (out[2] * out[3])) % k.oc)];
  }
  for_each_tap(k, out, [&](int64_t n, int64_t o, int64_t c, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t ih,
                           int64_t iw) {
    y[static_cast<size_t>(at4(out, n, o, oh, ow))] +=
        xs[static_cast<size_t>(at4(x.shape(), n, c, ih, iw))] * ws[static_cast<size_t>(at4(w.shape(), o, c, kh, kw))];
  });
  return from_vector<double>(y, out);
}

struct ConvInputs {
  Tensor x, w, b;
};

ConvInputs make_inputs(const ConvCase& k, DType dtype) {
  return {randn({k.n, k.c, k.h, k.w}, dtype), randn({k.oc, k.c, k.kh, k.kw}, dtype), randn({k.oc}, dtype)};
}

std::string describe(const ConvCase& k) {
  std::ostringstream os;
  os << "conv2d x[" << k.n << "," << k.c << "," << k.h << "," << k.w << "] w[" << k.oc << "," << k.c << "," << k.kh
     << "," << k.kw << "] stride " << k.stride << " padding " << k.padding << " dilation " << k.dilation;
  return os.str();
}

}  // namespace

TEST_CASE("conv2d forward matches a direct fp64 convolution", "[conv2d]") {
  manual_seed(1);
  for (const kernels::CpuConvAlgorithm algorithm : kAlgorithms)
  for (const ConvCase& k : kCases) {
    const kernels::CpuConvScope scope(algorithm);
    INFO("EMBER_CPU_CONV=" << kernels::cpu_conv_algorithm_name(algorithm));
    for (DType dtype : {kFloat32, kFloat64}) {
      const ConvInputs in = make_inputs(k, dtype);
      // f32: sums of <= 4*5*5 products of O(1) values, ~1e-6 relative rounding; f64 is exact to ~1e-14.
      const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
      const Tensor y = conv2d(in.x, in.w, in.b, k.stride, k.padding, k.dilation);
      CHECK(y.dtype() == dtype);
      expect_close(y, reference_conv(k, in.x, in.w, in.b), tol, describe(k) + " with bias");
      expect_close(conv2d(in.x, in.w, Tensor(), k.stride, k.padding, k.dilation),
                   reference_conv(k, in.x, in.w, Tensor()), tol, describe(k) + " without bias");
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
  for (const ConvCase& k : {ConvCase{7, 3, 9, 8, 4, 3, 3, 2, 1, 1}, ConvCase{7, 3, 9, 8, 4, 3, 3, 1, 1, 1}}) {
  const kernels::CpuConvScope scope(algorithm);
  INFO("EMBER_CPU_CONV=" << kernels::cpu_conv_algorithm_name(algorithm) << ", " << describe(k));
  const ConvInputs in = make_inputs(k, kFloat32);
  const Tensor x = in.x.clone().requires_grad_(), w = in.w.clone().requires_grad_(), b = in.b.clone().requires_grad_();
  const Tensor y = conv2d(x, w, b, k.stride, k.padding, k.dilation);
  const Tensor dy = randn(y.shape());
  y.backward(dy);
  const Shape out = y.shape();
  const std::vector<double> xs = x.to_vector<double>(), ws = w.to_vector<double>(), gs = dy.to_vector<double>();
  std::vector<double> dx(xs.size(), 0.0), dw(ws.size(), 0.0), db(static_cast<size_t>(k.oc), 0.0);
  for_each_tap(k, out, [&](int64_t n, int64_t o, int64_t c, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t ih,
                           int64_t iw) {
    const double g = gs[static_cast<size_t>(at4(out, n, o, oh, ow))];
    dx[static_cast<size_t>(at4(x.shape(), n, c, ih, iw))] += g * ws[static_cast<size_t>(at4(w.shape(), o, c, kh, kw))];
    dw[static_cast<size_t>(at4(w.shape(), o, c, kh, kw))] += g * xs[static_cast<size_t>(at4(x.shape(), n, c, ih, iw))];
  });
  for (int64_t i = 0; i < out.numel(); ++i) db[static_cast<size_t>((i / (out[2] * out[3])) % k.oc)] += gs[static_cast<size_t>(i)];
  // f32 sums of up to 7*5*4 products: 1e-5 relative covers the rounding.
  test::expect_values(x.grad(), dx, 1e-5, "conv2d dx");
  test::expect_values(w.grad(), dw, 1e-5, "conv2d dweight");
  test::expect_values(b.grad(), db, 1e-5, "conv2d dbias");
  }
}

// The direct convolution (kernels/cpu/conv2d_direct.h) under every instruction set this CPU
// has: its tiles pad the output channels, the taps and the wide pixels, so the cases cover
// counts on both sides of each tile (1..17 channels, 1..150 taps, widths 3..28) and LeNet-5's layers.
TEST_CASE("the direct convolution matches fp64 formulas under every instruction set this CPU has", "[conv2d][direct]") {
  const std::vector<ConvCase> cases = {
      {3, 1, 28, 28, 6, 5, 5, 1, 2, 1},    // LeNet-5 conv1
      {3, 6, 14, 14, 16, 5, 5, 1, 0, 1},   // LeNet-5 conv2
      {2, 1, 28, 28, 32, 3, 3, 1, 1, 1},   // ConvNet conv1
      {2, 3, 5, 3, 17, 3, 3, 1, 1, 1},     // 17 channels: one past two tiles of 8
      {4, 2, 9, 8, 3, 3, 3, 1, 2, 2},      // dilation 2
      {1, 5, 6, 7, 1, 1, 1, 1, 0, 1},      // pointwise, one channel out
      {2, 2, 7, 9, 5, 2, 4, {1, 1}, {0, 2}, {2, 1}},  // rectangular kernel, per-axis padding and dilation
  };
  std::vector<kernels::cpu::CpuIsa> isas;
  for (kernels::cpu::CpuIsa isa : {kernels::cpu::CpuIsa::avx2, kernels::cpu::CpuIsa::avx512})
    if (isa <= kernels::cpu::cpu_isa_supported()) isas.push_back(isa);
  if (isas.empty()) WARN("this CPU has neither AVX2 nor AVX-512: the direct convolution does not run here");
  const kernels::CpuConvScope direct(kernels::CpuConvAlgorithm::direct);
  manual_seed(7);
  for (kernels::cpu::CpuIsa isa : isas)
    for (const ConvCase& k : cases) {
      const kernels::cpu::CpuIsaScope scope(isa);
      INFO("EMBER_CPU_ISA=" << kernels::cpu::cpu_isa_name(isa) << ", " << describe(k));
      const ConvInputs in = make_inputs(k, kFloat32);
      const Tensor x = in.x.clone().requires_grad_(), w = in.w.clone().requires_grad_(), b = in.b.clone().requires_grad_();
      const Tensor y = conv2d(x, w, b, k.stride, k.padding, k.dilation);
      // f32 sums of up to 150 products of O(1) values, and of up to 3 * 784 for the weight gradient
      expect_close(y, reference_conv(k, in.x, in.w, in.b), 1e-5, "direct forward");
      expect_close(conv2d(in.x, in.w, Tensor(), k.stride, k.padding, k.dilation), reference_conv(k, in.x, in.w, Tensor()),
                   1e-5, "direct forward without bias");
      const Tensor dy = randn(y.shape());
      y.backward(dy);
      const Shape out = y.shape();
      const std::vector<double> xs = in.x.to_vector<double>(), gs = dy.to_vector<double>();
      std::vector<double> dw(static_cast<size_t>(w.numel()), 0.0);
      for_each_tap(k, out, [&](int64_t n, int64_t o, int64_t c, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t ih,
                               int64_t iw) {
        dw[static_cast<size_t>(at4(w.shape(), o, c, kh, kw))] +=
            gs[static_cast<size_t>(at4(out, n, o, oh, ow))] * xs[static_cast<size_t>(at4(x.shape(), n, c, ih, iw))];
      });
      test::expect_values(w.grad(), dw, 1e-4, "direct weight gradient");
    }
}

TEST_CASE("EMBER_CPU_ISA: an instruction set the CPU lacks is refused by name", "[conv2d][direct]") {
  using kernels::cpu::CpuIsa;
  CHECK(std::string(kernels::cpu::cpu_isa_name(kernels::cpu::cpu_isa())) != "");
  {
    const kernels::cpu::CpuIsaScope baseline(CpuIsa::baseline);  // always possible: the portable code
    const kernels::CpuConvScope direct(kernels::CpuConvAlgorithm::direct);
    const Tensor x = randn({2, 1, 6, 6}), w = randn({3, 1, 3, 3});
    CHECK_FALSE(kernels::cpu::direct_applies(kernels::conv2d_geometry(x.shape(), w.shape(), {}, "conv2d")));
    const ConvCase k{2, 1, 6, 6, 3, 3, 3, 1, 0, 1};
    expect_close(conv2d(x, w, Tensor()), reference_conv(k, x, w, Tensor()), 1e-5, "direct falls back to im2col");
  }
  CHECK(kernels::cpu::cpu_isa_from_string("auto") == kernels::cpu::cpu_isa_supported());
  CHECK(kernels::cpu::cpu_isa_from_string("baseline") == CpuIsa::baseline);
  CHECK_THROWS_WITH(kernels::cpu::cpu_isa_from_string("sse"),
                    Catch::Matchers::Contains("EMBER_CPU_ISA='sse'") && Catch::Matchers::Contains("avx2 or avx512"));
  if (kernels::cpu::cpu_isa_supported() < CpuIsa::avx512) {
    CHECK_THROWS_WITH(kernels::cpu::set_cpu_isa(CpuIsa::avx512),
                      Catch::Matchers::Contains("avx512") && Catch::Matchers::Contains("supports at most"));
    CHECK_THROWS_WITH(kernels::cpu::cpu_isa_from_string("avx512"), Catch::Matchers::Contains("supports at most"));
  }
}

// The error bound of conv2d_winograd.h, on the zoo's 3x3 layers (ConvNet's and ResNet-20's
// widest): f32 Winograd against a direct fp64 convolution is within twice f32 im2col's own
// error on the same inputs, and within 5e-5 relative.
TEST_CASE("Winograd F(2x2, 3x3) holds its error bound on the zoo's 3x3 layers", "[conv2d][winograd]") {
  manual_seed(6);
  const std::vector<ConvCase> layers = {
      {2, 32, 28, 28, 32, 3, 3, 1, 1, 1},  // ConvNet conv2
      {2, 32, 14, 14, 64, 3, 3, 1, 1, 1},  // ConvNet conv3
      {2, 64, 14, 14, 64, 3, 3, 1, 1, 1},  // ConvNet conv4
      {2, 64, 7, 7, 64, 3, 3, 1, 1, 1},    // ResNet-20 stage 3
  };
  // The largest |a - e| / (1 + |e|), expect_close's measure.
  const auto worst_error = [](const Tensor& actual, const Tensor& expected) {
    const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - e[i]) / (1.0 + std::fabs(e[i])));
    return worst;
  };
  for (const ConvCase& k : layers) {
    const ConvInputs in = make_inputs(k, kFloat32);
    const Tensor reference = reference_conv(k, in.x, in.w, in.b);
    const auto error_of = [&](kernels::CpuConvAlgorithm algorithm) {
      const kernels::CpuConvScope scope(algorithm);
      return worst_error(conv2d(in.x, in.w, in.b, k.stride, k.padding), reference);
    };
    const double winograd = error_of(kernels::CpuConvAlgorithm::winograd);
    const double im2col = error_of(kernels::CpuConvAlgorithm::im2col);
    INFO(describe(k) << ": f32 error against fp64, Winograd " << winograd << ", im2col " << im2col);
    CHECK(winograd <= 2 * im2col);
    CHECK(winograd <= 5e-5);
  }
}

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
  // Same f16-rounded inputs in f32; the output is rounded once to f16 (2^-11 relative) after 27-term sums.
  expect_close(y16, conv2d(x16.to(kFloat32), w16.to(kFloat32), b16.to(kFloat32), 1, 1), 2e-3, "conv2d f16");
  const Tensor xg = x16.clone().requires_grad_(), wg = w16.clone().requires_grad_();
  sum(conv2d(xg, wg, b16, 1, 1)).backward();
  CHECK(xg.grad().dtype() == kFloat16);
  CHECK(wg.grad().dtype() == kFloat16);
  const Tensor xf = x16.to(kFloat32).requires_grad_(), wf = w16.to(kFloat32).requires_grad_();
  sum(conv2d(xf, wf, b16.to(kFloat32), 1, 1)).backward();
  expect_close(xg.grad(), xf.grad(), 2e-3, "conv2d f16 dx");
  expect_close(wg.grad(), wf.grad(), 2e-3, "conv2d f16 dweight");
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

// Timing only (hidden; run with "[.perf]"): the kernels of the conv layers of LeNet-5 and a
// VGG-style ConvNet at batch 64 on 28x28x1 inputs: forward, input gradient (not for the first
// layer, whose input needs none), weight gradient, bias gradient. Wall time and process CPU
// time (robust when other processes share the cores), medians. Never asserts a time.
TEST_CASE("conv2d layer timings at batch 64", "[.perf][conv2d]") {
  struct Layer {
    const char* name;
    int64_t c, oc, k, pad, hw;
    bool need_x;
  };
  const Layer layers[] = {{"lenet.conv1 1->6 5x5 p2 @28", 1, 6, 5, 2, 28, false},
                          {"lenet.conv2 6->16 5x5 @14", 6, 16, 5, 0, 14, true},
                          {"convnet.conv1 1->32 3x3 p1 @28", 1, 32, 3, 1, 28, false},
                          {"convnet.conv2 32->32 3x3 p1 @28", 32, 32, 3, 1, 28, true},
                          {"convnet.conv3 32->64 3x3 p1 @14", 32, 64, 3, 1, 14, true},
                          {"convnet.conv4 64->64 3x3 p1 @14", 64, 64, 3, 1, 14, true}};
  constexpr int kWarmup = 2, kRuns = 11;
  const auto cpu_now = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
  };
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("%-34s %18s %18s %18s %18s   (wall ms / cpu ms, %d threads)\n", "layer", "forward", "input grad",
              "weight grad", "bias grad", omp_get_max_threads());
  for (const Layer& l : layers) {
    const kernels::Conv2dArgs args{1, l.pad, 1};
    const Tensor x = randn({64, l.c, l.hw, l.hw}), w = randn({l.oc, l.c, l.k, l.k}), b = randn({l.oc});
    const Tensor dy = randn(kernels::conv2d(x, w, b, args).shape());
    const std::function<void()> steps[] = {[&] { kernels::conv2d(x, w, b, args); },
                                           [&] { if (l.need_x) kernels::conv2d_backward_input(dy, w, x.shape(), args); },
                                           [&] { kernels::conv2d_backward_weight(x, dy, w.shape(), args); },
                                           [&] { kernels::conv2d_backward_bias(dy); }};
    std::printf("%-34s", l.name);
    for (const auto& step : steps) {
      std::vector<double> wall, cpu;
      for (int r = 0; r < kWarmup + kRuns; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_now();
        step();
        const double c1 = cpu_now();
        const auto t1 = std::chrono::steady_clock::now();
        if (r < kWarmup) continue;
        wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        cpu.push_back(c1 - c0);
      }
      std::printf("   %7.3f / %7.3f", median(wall), median(cpu));
    }
    std::printf("\n");
  }
}
