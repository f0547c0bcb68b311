// CPU matmul: C = op(A) op(B) on the tensors' row-major storage, each product one call of
// kernels/cpu/gemm.h (ember's packed GEMM, or OpenBLAS under EMBER_CPU_GEMM=openblas). Policy:
//   - [B, M, K] x [K, N] (A not transposed) folds the batch into the rows: one
//     [B*M, K] x [K, N] GEMM, the shape a GEMM is fastest at.
//   - other batched products loop over the batch; when each product is small the
//     loop runs on OpenMP threads (each GEMM then runs single-threaded inside them),
//     otherwise the batch runs in order and each GEMM uses the threads.
//   - f16 is a storage type: A and B are widened to f32, multiplied, narrowed back.
#include <algorithm>
#include <type_traits>

#include "core/simulation.h"
#include "kernels/cpu/f16_storage.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"

namespace ember::kernels::cpu {

#include "kernels/backend_into.inc"

namespace {

// Below this many multiply-adds per product, threads over the batch beat threads inside it.
constexpr int64_t kSmallGemmMacs = int64_t{64} * 64 * 64;

// One row-major product: c[m, n] = op(a) op(b), with a stored [m, k] ([k, m] when
// transpose_a) and b stored [k, n] ([n, k] when transpose_b).
template <class T>
void product(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool transpose_a, bool transpose_b) {
  gemm<T>(m, n, k, {a, transpose_a ? m : k, transpose_a}, {b, transpose_b ? k : n, transpose_b}, {c, n});
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
    product(pa, pb, pc, batch * m, n, k, false, transpose_b);
    return;
  }
  const int64_t a_step = m * k, c_step = m * n;
  const int64_t b_step = b.dim() == 3 ? k * n : 0;  // a 2-D B is shared by every batch
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      product(pa + i * a_step, pb + i * b_step, pc + i * c_step, m, n, k, transpose_a, transpose_b);
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
