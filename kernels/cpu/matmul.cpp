// CPU matmul: C = op(A) op(B) through Eigen maps over the tensors' row-major
// storage. Eigen is built with EIGEN_USE_BLAS, so every product that is not tiny
// is one sgemm/dgemm call into OpenBLAS's OpenMP build, which shares our OpenMP
// thread pool. Policy:
//   - [B, M, K] x [K, N] (A not transposed) folds the batch into the rows: one
//     [B*M, K] x [K, N] GEMM, the shape BLAS is fastest at.
//   - other batched products loop over the batch; when each product is small the
//     loop runs on OpenMP threads (BLAS then runs single-threaded inside them),
//     otherwise the batch runs in order and BLAS uses the threads.
//   - f16 is a storage type: A and B are widened to f32, multiplied, narrowed back.
//   - K = 0 gives zeros; M = 0 or N = 0 gives an empty result.
// GCC 12 warns about its own _mm256_undefined_pd inlined from Eigen's AVX-512
// code (GCC bug 105593, a false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Core>

#include <algorithm>
#include <type_traits>

#include "kernels/cpu/f16_storage.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

#include "kernels/backend_api.inc"

namespace {

// Below this many multiply-adds per product, threads over the batch beat BLAS threads.
constexpr int64_t kSmallGemmMacs = int64_t{64} * 64 * 64;

// One row-major product: c[m, n] = op(a) op(b), with a stored [m, k] ([k, m] when
// transpose_a) and b stored [k, n] ([n, k] when transpose_b).
template <class T>
void gemm(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool transpose_a, bool transpose_b) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<Matrix> out(c, m, n);
  const Eigen::Map<const Matrix> lhs(a, transpose_a ? k : m, transpose_a ? m : k);
  const Eigen::Map<const Matrix> rhs(b, transpose_b ? n : k, transpose_b ? k : n);
  // Each branch is a distinct expression type; Eigen passes the transposes to BLAS as flags (no copies).
  if (!transpose_a && !transpose_b) out.noalias() = lhs * rhs;
  else if (transpose_a && !transpose_b) out.noalias() = lhs.transpose() * rhs;
  else if (!transpose_a && transpose_b) out.noalias() = lhs * rhs.transpose();
  else out.noalias() = lhs.transpose() * rhs.transpose();
}

template <class T>
void batched_gemm(const Tensor& a, const Tensor& b, const Tensor& c, bool transpose_a, bool transpose_b) {
  const int64_t batch = c.dim() == 3 ? c.size(0) : 1;
  const int64_t m = c.size(-2), n = c.size(-1);
  const int64_t k = transpose_a ? a.size(-2) : a.size(-1);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* pc = c.data<T>();
  if (batch > 1 && b.dim() == 2 && !transpose_a) {
    gemm(pa, pb, pc, batch * m, n, k, false, transpose_b);
    return;
  }
  const int64_t a_step = m * k, c_step = m * n;
  const int64_t b_step = b.dim() == 3 ? k * n : 0;  // a 2-D B is shared by every batch
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      gemm(pa + i * a_step, pb + i * b_step, pc + i * c_step, m, n, k, transpose_a, transpose_b);
  };
  const int64_t macs = std::max<int64_t>(1, m * n * k);
  if (macs >= kSmallGemmMacs) {
    run(0, batch);
  } else {
    parallel_for(batch, std::max<int64_t>(1, kSmallGemmMacs / macs), run);
  }
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  const int64_t m = transpose_a ? a.size(-1) : a.size(-2);
  const int64_t n = transpose_b ? b.size(-2) : b.size(-1);
  const int64_t k = transpose_a ? a.size(-2) : a.size(-1);
  const Shape out_shape = a.dim() == 3 ? Shape{a.size(0), m, n} : Shape{m, n};
  if (a.dtype() == DType::f16)
    return computed_in_f32([&] { return matmul(widened(a), widened(b), transpose_a, transpose_b); });
  Tensor c = empty(out_shape, TensorOptions().dtype(a.dtype()).device(a.device()));
  if (c.numel() == 0) return c;
  if (k == 0) {
    fill_(c, 0.0);  // an empty sum
    return c;
  }
  dispatch_floating("matmul", a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half>) {
      EMBER_THROW("matmul: f16 is widened to f32 before this point");
    } else {
      batched_gemm<T>(a, b, c, transpose_a, transpose_b);
    }
  });
  return c;
}

}  // namespace ember::kernels::cpu
