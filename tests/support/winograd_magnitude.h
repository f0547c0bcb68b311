#pragma once
// The magnitudes that bound Winograd F(m x m, 3x3)'s rounding error (kernels/cpu/conv2d_winograd.h,
// m = 2 or 4), for tests/support/error_bound.h:
//
//   const Tensor m = winograd_forward_magnitude(x64, w64, b64, padding, 4);    // [N, OC, OH, OW]
//   expect_within(y, y64, sum_error_bound(winograd_forward_terms(C, 4), DType::f32, m), "conv2d");
//
// Winograd computes each output through transforms whose intermediate terms cancel in exact
// arithmetic but are each rounded: Y = A^T [(G g G^T) . (B^T d B)] A, summed over channels, with
// Lavin & Gray's A, B, G. Its error is bounded by gamma(n) times the same formula with every
// matrix and value replaced by its absolute value (Higham §3.5: a computation of products and
// sums is perturbed by at most gamma(depth) times its absolute-value counterpart), where n is
// the longest chain of roundings a term goes through. That magnitude is larger than the direct
// method's sum |w| |x| (about 7x for random data: the cancelled terms count), so a test of
// Winograd needs it, not im2col's. The weight gradient runs the adjoint transforms:
// dg = G^T [sum over tiles (A dY A^T) . (B^T d B)] G.
//
// Inputs are fp64 CPU tensors; kernels are 3x3, stride and dilation 1 (winograd_applies).
#include <cstdint>

#include "core/tensor.h"
#include "kernels/conv_geometry.h"

namespace ember::test {

// The magnitude of each output y[n][o][oy][ox] (bias may be undefined: it adds |bias|).
Tensor winograd_forward_magnitude(const Tensor& x, const Tensor& w, const Tensor& bias, Size2 padding, int64_t tile);
// The magnitude of each weight gradient entry dw[o][c][kh][kw], for output gradient dy.
Tensor winograd_weight_grad_magnitude(const Tensor& x, const Tensor& dy, Size2 padding, int64_t tile);
// The magnitude of each input gradient entry of a "same" convolution (padding 1), which the CPU
// may compute as the forward convolution of dy with the weight flipped in both axes and its
// channel axes swapped (kernels/cpu/conv2d.cpp, input_grad_as_same_conv): Winograd when that
// convolution takes it. The sum is winograd_forward_terms(OC, tile) long.
Tensor winograd_input_grad_magnitude(const Tensor& dy, const Tensor& w, int64_t tile);

// Roundings a term goes through. F(2x2): the input transform (two 2-term sums), the kernel
// transform (two 3-term sums, halvings are exact), the product, the channel sum (C terms), the
// output transform (two 3-term sums) and the bias: C + 2 + 4 + 1 + 4 + 1. F(4x4), as
// conv2d_winograd.cpp computes it (bt6, g6, at6): the input transform at most 3 per pass (a
// product by 5 or a difference, a product and difference, a sum; by 2 and 4 is exact), the
// kernel transform at most 4 per pass (1/6 itself, two sums, the product by it), the product,
// the channel sum, the output transform 3 per pass (by 2, 4 and 8 exact) and the bias:
// C + 6 + 8 + 1 + 6 + 1.
inline int64_t winograd_forward_terms(int64_t channels, int64_t tile) { return channels + (tile == 4 ? 22 : 12); }
// The weight gradient: the adjoint transforms around a sum over every tile of every image. F(2x2):
// T + 12. F(4x4), as conv2d_winograd_weight_grad.cpp computes it (bt6, a6, gt6): the input
// transform 3 per pass, the output gradient's 3 per pass (a sum, a product by 2 and a sum; by 4
// and 8 is exact), the product, the sum over tiles, and G^T at most 5 per pass (two sums, 1/6
// itself, the product by it, the last sum): T + 6 + 6 + 1 + 10.
inline int64_t winograd_weight_grad_terms(int64_t tiles_times_images, int64_t tile) {
  return tiles_times_images + (tile == 4 ? 23 : 12);
}

}  // namespace ember::test
