#pragma once
// Winograd F(2x2, 3x3) convolution on the CPU: 3x3 kernels, stride 1, dilation 1, any
// padding. Each 2x2 block of outputs comes from a 4x4 tile of the input with 16
// multiplications per (input channel, output channel) instead of im2col's 36:
//
//   V = B^T d B   each 4x4 input tile d, per input channel            (adds only)
//   U = G g G^T   each 3x3 kernel g, per (output, input) channel       (adds and halves)
//   M[k] = U[k] V[k] for k = 0..15: over channels, 16 GEMMs [OC, C] x [C, tiles]
//   Y = A^T M A   each tile back to its 2x2 outputs, plus the bias     (adds only)
//
// with B, G, A Lavin & Gray's matrices for F(2, 3) (arXiv:1509.09308). The 16 GEMMs hold
// 16/36 of the direct method's multiply-adds and no im2col matrix is ever written; tiles of
// several images share one GEMM so small planes still give it wide matrices.
//
//   if (winograd_applies(g)) cpu::conv2d_winograd<float>(g, x, weight, bias, y);
//
// Error: the transforms only add, subtract and halve (at most four terms each way), so the
// rounding is of the same order as im2col's long dot products. The tests
// (tests/kernels/test_conv2d*.cpp) hold f32 Winograd, against a direct fp64 convolution, within
// gamma(C + 12) of the same formula in absolute values (tests/support/winograd_magnitude.h), on
// their shapes and on the zoo's 3x3 layers; measured on the 2-core AMD EPYC (AVX-512), worst
// |a - e| / (1 + |e|): ConvNet 32->32 9.0e-6 (im2col 1.4e-5), 32->64 1.0e-5 (1.2e-5), 64->64
// 1.8e-5 (2.6e-5), ResNet-20 64->64 at 7x7 1.7e-5 (1.9e-5).
//
// F(4x4, 3x3): 6x6 input tiles, 36 GEMMs, 36 multiplications per 16 outputs instead of F(2x2)'s
// 64, with Lavin & Gray's matrices for the points 0, 1, -1, 2, -2 and infinity (the transforms
// multiply by 4, 5, 8 and 1/6, 1/12, 1/24). Measured on the same data, worst |a - e| / (1 + |e|):
// 1.0e-4 to 2.9e-4 on the layers above, 10-20x F(2x2)'s (the tests hold it within gamma(C + 22)
// of its own magnitudes). On the 2-core AMD EPYC (one thread, bench_conv, 2026-11-27), F(4x4)
// against F(2x2), forward and input gradient: 28x28 planes (ResNet-20 stage 1, ConvNet conv2)
// 7-17% faster on AVX-512 and 25-29% under AVX2; 14x14 1-12% faster on AVX-512 (an earlier run:
// -8% to +13%) and 11-17% under AVX2; 7x7 ~30% slower on AVX-512 and 5-8% under AVX2
// (two tiles a row fill a quarter of a vector). A training step (bench-train, one thread):
// ResNet-20 +4.4% and ConvNet +9.2% on AVX-512, +7.6% and +13.7% under AVX2 (docs/kernels.md).
// So EMBER_CPU_CONV=auto runs F(4x4) where its tiles fill the vectors (winograd4_pays) and
// F(2x2) elsewhere; winograd runs F(2x2) and winograd4 F(4x4) wherever they apply. The weight
// gradient's transforms run over channels, not tiles, so no plane width leaves its lanes idle:
// auto runs it as F(4x4) wherever Winograd runs (measured on a 2-core AMD EPYC Zen 3, AVX2, one
// thread, two sets of interleaved bench-train steps: ResNet-20 +5% and +1%, ConvNet +11% and +6%;
// docs/kernels.md). Its error
// is the forward's kind: the tests hold it within gamma(N tiles + 23) of its own magnitudes.
//
// Which algorithm runs is kernels/providers.h's CpuConvAlgorithm (EMBER_CPU_CONV).
#include <cstdint>
#include "core/tensor.h"
#include "kernels/conv_geometry.h"

namespace ember::kernels::cpu {

// The geometry F(2x2, 3x3) computes: 3x3 kernel, unit stride and dilation, non-empty output.
bool winograd_applies(const Conv2dGeometry& g);
// What EMBER_CPU_CONV=auto picks: Winograd where it applies and the channels are wide enough
// for its 16 GEMMs to beat one im2col GEMM (measured: bench/kernels/bench_conv).
bool winograd_pays(const Conv2dGeometry& g);
// Where auto runs F(4x4, 3x3) for the forward and input gradient: where Winograd pays and a row
// of its tiles fills at least 7 of a vector's 8 lanes (planes 25-32 wide, 53-64 wide), or two rows
// of four tiles share one (13-16 wide). Other rows (7x7: two tiles; 17-24 wide: five or six)
// leave lanes idle that F(2x2)'s twice as many tiles fill better.
bool winograd4_pays(const Conv2dGeometry& g);
// Where auto runs the weight gradient as F(4x4, 3x3): wherever Winograd pays.
bool winograd4_weight_grad_pays(const Conv2dGeometry& g);

// y [N, OC, OH, OW] = conv(x, weight) + bias (bias may be undefined) by F(tile x tile, 3x3),
// tile 2 or 4; T is float or double.
// Allocates its workspace (transformed kernels, per-thread tiles) under the workspace category,
// and returns after allocating when the allocator only simulates.
template <class T>
void conv2d_winograd(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const Tensor& y, int64_t tile = 2);

// dweight [OC, C, 3, 3] = the gradient of that convolution's weight for output gradient dy,
// by the adjoints of F(tile x tile, 3x3)'s transforms (tile 2 or 4): (tile + 2)^2 GEMMs
// [OC, tiles] x [tiles, C] per group of images.
template <class T>
void conv2d_winograd_weight_grad(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, const Tensor& dweight,
                                 int64_t tile = 2);

}  // namespace ember::kernels::cpu
