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
// GCC 12 warns about its own _mm256_undefined_pd inlined from Eigen's AVX-512
// code (GCC bug 105593, a false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Core>

#include <algorithm>
#include <type_traits>

#include "core/simulation.h"
#include "kernels/cpu/f16_storage.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"

namespace ember::kernels::cpu {

#include "kernels/backend_into.inc"

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

void matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, const Tensor& c) {
  if (a.dtype() == DType::f16) {
    computed_in_f32(c, [&](const Tensor& c32) { matmul(widened(a), widened(b), transpose_a, transpose_b, c32); });
    return;
  }
  if (simulating()) return;  // no scratch of its own in f32 and f64
  dispatch_floating("matmul", a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, Half>) batched_gemm<T>(a, b, c, transpose_a, transpose_b);
  });
}

}  // namespace ember::kernels::cpu
