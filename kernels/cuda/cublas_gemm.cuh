#pragma once
// The GEMM problem both CUDA providers solve (kernels/cuda/matmul.cu builds it
// from the tensors), and the cuBLAS provider:
//
//   GemmProblem p{batch, m, n, k, transpose_a, transpose_b, stride_a, stride_b, stride_c};
//   cublas_gemm(p, DType::f32, a.data_ptr(), b.data_ptr(), c.data_ptr(), a.device());
//
// Row-major, contiguous: A is stored [m, k] ([k, m] when transpose_a), B [k, n]
// ([n, k] when transpose_b), C [m, n]; batch i starts at i * stride_{a,b,c}
// elements (stride_b = 0 shares one B across the batch). m, n, k > 0.
#include <cstdint>

#include "core/device.h"
#include "core/dtype.h"

namespace ember::kernels::cuda {

struct GemmProblem {
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  bool transpose_a = false, transpose_b = false;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batches
};

// C = op(A) op(B) through cuBLAS on the current stream; f32 (full fp32, no TF32),
// f16 (fp32 accumulation) or f64. Throws ember::Error naming cuBLAS's status.
void cublas_gemm(const GemmProblem& problem, DType dtype, const void* a, const void* b, void* c, Device device);

}  // namespace ember::kernels::cuda
