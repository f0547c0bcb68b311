#pragma once
// Reference convolutions in fp64 and their error bounds, for the conv2d tests
// (tests/kernels/test_conv2d*.cpp):
//
//   const ConvCase k{2, 3, 8, 8, 4, 3, 3, 1, 1, 1};   // n, c, h, w, oc, kh, kw, stride, padding, dilation
//   const ConvInputs in = make_inputs(k, kFloat32);
//   expect_within(conv2d(in.x, in.w, in.b, k.stride, k.padding), reference_conv(k, in.x, in.w, in.b),
//                 forward_bound(k, algorithm, kFloat32, in, true), describe(k));
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "kernels/conv_geometry.h"
#include "kernels/providers.h"

namespace ember::test {

struct ConvCase {
  int64_t n, c, h, w, oc, kh, kw;
  Size2 stride, padding, dilation;
};

Shape conv_out_shape(const ConvCase& k);

// Direct convolution in fp64: y[n][o][oh][ow] = b[o] + sum x[n][c][ih][iw] * w[o][c][kh][kw].
Tensor reference_conv(const ConvCase& k, const Tensor& x, const Tensor& w, const Tensor& b);

struct ConvInputs {
  Tensor x, w, b;
};
ConvInputs make_inputs(const ConvCase& k, DType dtype);
std::string describe(const ConvCase& k);

// Whether `algorithm` runs k as Winograd, and then the forward's and the weight gradient's output
// tiles: F(2x2, 3x3) or F(4x4, 3x3). Under automatic, the kernel's own choice for k's geometry
// (kernels/cpu/conv2d_winograd.h: winograd_pays, winograd4_pays, winograd4_weight_grad_pays).
bool runs_winograd(const ConvCase& k, kernels::CpuConvAlgorithm algorithm);
int64_t forward_tile(const ConvCase& k, kernels::CpuConvAlgorithm algorithm);
int64_t weight_grad_tile(const ConvCase& k, kernels::CpuConvAlgorithm algorithm);

// conv2d's gradients in fp64 for output gradient dy, and their bounds (tests/support/error_bound.h):
// dx sums up to OC kh kw products, dw and db N OH OW; each bound is gamma(length) times the sum of
// the |terms|, with Winograd's magnitudes and lengths where it runs (the weight gradient, and the
// input gradient of a "same" 3x3 convolution, computed as a flipped forward convolution).
struct ConvGrads {
  std::vector<double> dx, dw, db;
  std::vector<double> dx_bound, dw_bound, db_bound;
};
ConvGrads reference_grads(const ConvCase& k, kernels::CpuConvAlgorithm algorithm, DType dtype, const Tensor& x,
                          const Tensor& w, const Tensor& dy);

// How far y may be from the fp64 reference (tests/support/error_bound.h): a sum of C kh kw
// products and the bias, in any order, is within gamma(C kh kw + 1) of sum |x| |w| + |b|;
// Winograd's transforms have magnitudes and a sum length of their own
// (tests/support/winograd_magnitude.h).
Tensor forward_bound(const ConvCase& k, kernels::CpuConvAlgorithm algorithm, DType dtype, const ConvInputs& in,
                     bool bias);

}  // namespace ember::test
