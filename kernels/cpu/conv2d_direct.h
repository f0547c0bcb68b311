#pragma once
// Direct convolution on the CPU: stride 1, any kernel, padding and dilation, f32, on a CPU
// with AVX2 + FMA or AVX-512 (kernels/cpu/cpu_isa.h). No im2col matrix is written: each
// image is copied once into zero-padded planes, and a register-tiled loop of our own reads
// tap (c, kh, kw) of every output pixel straight from them (kernels/cpu/conv2d_direct_tiles.h):
//
//   forward      y[oc][p]  = b[oc] + sum_k W[oc][k] * x_padded[offset[k] + p]
//   weight grad  dW[oc][k] = sum_n sum_p dy[n][oc][p] * x_padded[n][offset[k] + p]
//
// It exists for the layers im2col + GEMM serves worst: few input channels and many taps
// (LeNet-5's 1->6 and 6->16 5x5), where the column matrix is most of the traffic and the
// GEMMs are too small for BLAS to reach its speed. The input gradient stays
// with im2col (as a full convolution it would do twice the multiply-adds).
//
//   if (direct_applies(g)) cpu::conv2d_direct(g, x, weight, bias, y);
//
// Error: the same products as im2col summed in a different order (per tap, then per lane and
// across images for the weight gradient); tests/kernels/test_conv2d*.cpp hold it against a
// direct fp64 convolution as tightly as im2col, under every instruction set the CPU has.
#include "core/tensor.h"
#include "kernels/conv_geometry.h"

namespace ember::kernels::cpu {

// Stride 1, a non-empty output, and a CPU (cpu_isa()) with AVX2 or AVX-512. f32 only: callers check the dtype.
bool direct_applies(const Conv2dGeometry& g);
// What EMBER_CPU_CONV=auto picks for a layer Winograd does not take (measured: bench/kernels/bench_conv).
bool direct_pays(const Conv2dGeometry& g);

// y [N, OC, OH, OW] = conv(x, weight) + bias (bias may be undefined). Allocates its workspace
// (packed weights, per-thread padded planes and wide outputs) under the workspace category, and
// returns after allocating when the allocator only simulates.
void conv2d_direct(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& y);

// dweight [OC, C, KH, KW] = the gradient of that convolution's weight for output gradient dy.
void conv2d_direct_weight_grad(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, const Tensor& dweight);

}  // namespace ember::kernels::cpu
