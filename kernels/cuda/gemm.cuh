#pragma once
// The GEMM launcher on raw device pointers, for ops that build their own
// matrices (conv2d's im2col columns). It serves the provider chosen at run time
// (EMBER_GEMM=custom|cublas, kernels/providers.h), like matmul:
//
//   GemmProblem p{batch, m, n, k, transpose_a, transpose_b, stride_a, stride_b, stride_c};
//   gemm(p, DType::f32, a, b, c, device);   // C = op(A) op(B); layout: kernels/cuda/cublas_gemm.cuh
//
// m, n, k and batch must be positive; f32, f16 (fp32 accumulation) or f64.
#include "kernels/cuda/cublas_gemm.cuh"

namespace ember::kernels::cuda {

void gemm(const GemmProblem& problem, DType dtype, const void* a, const void* b, void* c, Device device);

}  // namespace ember::kernels::cuda
