// CUDA matmul: C = op(A) op(B), batched, in two providers chosen at run time
// (kernels/providers.h, EMBER_GEMM=custom|cublas). This file holds ours; the
// cuBLAS one is kernels/cuda/cublas_gemm.cu. Both solve the same GemmProblem.
//
// Our kernel is the classic shared-memory tiled SGEMM:
//   - a block of 256 threads owns a BM x BN tile of C and walks K in steps of
//     BK; each step copies a BM x BK slice of A and a BK x BN slice of B into
//     shared memory (converted to the accumulation type), then every thread
//     does BK rank-1 updates of its own TM x TN register micro-tile.
//   - two tile shapes from the same template: 128x128 with 8x8 micro-tiles
//     (64 FMAs per 16 shared loads per k, the better ratio) when the problem has
//     enough 128x128 tiles to fill every SM; 64x64 with 4x4 otherwise, so small
//     GEMMs (an MLP layer on a batch of 64) still launch enough blocks. f64 always
//     takes 64x64 (its double tiles would double shared memory).
//   - BK = 16: 2 * 16 * 129 * 4 B = 16.5 KB of shared memory for the large tile
//     leaves room for several blocks per SM.
//   - thread (ty, tx) owns rows ty + i*16 and columns tx + j*16 (strided, not
//     contiguous): a warp then reads one broadcast A value and 16 consecutive B
//     values per k, conflict-free, and its stores to C are coalesced.
//   - global loads are coalesced for every transpose flag: the copy loop walks
//     the stored layout's contiguous dim fastest (the flags are template
//     parameters). Shared rows are padded by one element so that the walks along
//     k do not all land in one bank.
//   - every load and store is bounds-checked (zero-filled outside), so any M, N,
//     K works; batches run on blockIdx.z (grid-stride past 65535).
//   - f16 is storage only: loads widen to fp32, accumulation is fp32, the store
//     rounds once. f64 accumulates in fp64.
// Not done (yet): double buffering, vectorised loads, tensor cores; cuBLAS is
// the reference that shows what they are worth. ptxas (sm_90) reports 0 to 48
// bytes of register spills on some f16 and transposed variants, from the 64-bit
// load-index math: hoisting each thread's load offsets out of the k loop is the
// first thing to try when tuning against bench/kernels/bench_matmul.cpp.
#include <type_traits>
#include <vector>

#include "core/cuda_runtime.h"
#include "kernels/cuda/cublas_gemm.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/gemm.cuh"
#include "kernels/ops.h"
#include "kernels/providers.h"

namespace ember::kernels::cuda {

namespace {

template <int BM_, int BN_, int BK_, int TM_, int TN_>
struct GemmTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int kThreadsM = BM / TM;  // thread rows
  static constexpr int kThreadsN = BN / TN;  // thread columns
  static constexpr int kThreads = kThreadsM * kThreadsN;
  static_assert(BM % TM == 0 && BN % TN == 0, "micro-tiles must divide the block tile");
  static_assert(kThreads == 256, "the launch uses 256 threads per block");
};
using SmallTile = GemmTile<64, 64, 16, 4, 4>;
using LargeTile = GemmTile<128, 128, 16, 8, 8>;

// Acc is the accumulation type: float for f32 and f16 storage, double for f64.
template <class Tile, bool kTransA, bool kTransB, class T, class Acc>
__global__ void __launch_bounds__(Tile::kThreads)
    gemm_tiled_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int64_t m, int64_t n,
                      int64_t k, int64_t batch, int64_t stride_a, int64_t stride_b, int64_t stride_c) {
  constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, TM = Tile::TM, TN = Tile::TN;
  __shared__ Acc a_tile[BK][BM + 1];  // a_tile[kk][mm] = op(A)[row0 + mm, k0 + kk]
  __shared__ Acc b_tile[BK][BN + 1];  // b_tile[kk][nn] = op(B)[k0 + kk, col0 + nn]

  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % Tile::kThreadsN;
  const int ty = tid / Tile::kThreadsN;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * BM;
  const int64_t col0 = static_cast<int64_t>(blockIdx.y) * BN;

  for (int64_t batch_index = blockIdx.z; batch_index < batch; batch_index += gridDim.z) {
    const T* a_batch = a + batch_index * stride_a;
    const T* b_batch = b + batch_index * stride_b;
    T* c_batch = c + batch_index * stride_c;

    Acc acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = Acc(0);

    for (int64_t k0 = 0; k0 < k; k0 += BK) {
      // op(A)[r, kk] is stored at r*k + kk, or at kk*m + r when transposed.
      for (int e = tid; e < BM * BK; e += Tile::kThreads) {
        const int mm = kTransA ? e % BM : e / BK;
        const int kk = kTransA ? e / BM : e % BK;
        const int64_t r = row0 + mm, kr = k0 + kk;
        Acc v = Acc(0);
        if (r < m && kr < k) v = static_cast<Acc>(load(a_batch, kTransA ? kr * m + r : r * k + kr));
        a_tile[kk][mm] = v;
      }
      // op(B)[kk, col] is stored at kk*n + col, or at col*k + kk when transposed.
      for (int e = tid; e < BK * BN; e += Tile::kThreads) {
        const int nn = kTransB ? e / BK : e % BN;
        const int kk = kTransB ? e % BK : e / BN;
        const int64_t col = col0 + nn, kr = k0 + kk;
        Acc v = Acc(0);
        if (col < n && kr < k) v = static_cast<Acc>(load(b_batch, kTransB ? col * k + kr : kr * n + col));
        b_tile[kk][nn] = v;
      }
      __syncthreads();

#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        Acc a_frag[TM], b_frag[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) a_frag[i] = a_tile[kk][ty + i * Tile::kThreadsM];
#pragma unroll
        for (int j = 0; j < TN; ++j) b_frag[j] = b_tile[kk][tx + j * Tile::kThreadsN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
      }
      __syncthreads();  // the next slice overwrites the tiles
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int64_t r = row0 + ty + i * Tile::kThreadsM;
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int64_t col = col0 + tx + j * Tile::kThreadsN;
        if (r < m && col < n) store(c_batch, r * n + col, acc[i][j]);
      }
    }
  }
}

// The current device's multiprocessor count, read once per device (GPUs of one machine may differ).
int sm_count() {
  static const std::vector<int> counts = [] {
    std::vector<int> c(static_cast<size_t>(ember::cuda::device_count()), 0);
    for (size_t d = 0; d < c.size(); ++d)
      EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&c[d], cudaDevAttrMultiProcessorCount, static_cast<int>(d)));
    return c;
  }();
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device));
  EMBER_CHECK(device >= 0 && static_cast<size_t>(device) < counts.size(), "matmul: current device " << device << " unknown");
  return counts[static_cast<size_t>(device)];
}

template <class Tile, class T, class Acc>
void launch_tiled(const GemmProblem& p, const T* a, const T* b, T* c) {
  const int64_t row_tiles = (p.m + Tile::BM - 1) / Tile::BM;
  const int64_t col_tiles = (p.n + Tile::BN - 1) / Tile::BN;
  constexpr int64_t kMaxGridYZ = 65535;
  EMBER_CHECK(row_tiles <= 0x7fffffffLL && col_tiles <= kMaxGridYZ,
              "matmul: [" << p.m << ", " << p.n << "] output is too large for one launch");
  const dim3 grid(static_cast<unsigned>(row_tiles), static_cast<unsigned>(col_tiles),
                  static_cast<unsigned>(p.batch < kMaxGridYZ ? p.batch : kMaxGridYZ));
  const dim3 block(Tile::kThreads);
  const auto args = [&](auto kernel) {
    kernel<<<grid, block, 0, current_stream()>>>(a, b, c, p.m, p.n, p.k, p.batch, p.stride_a, p.stride_b, p.stride_c);
  };
  if (!p.transpose_a && !p.transpose_b) args(gemm_tiled_kernel<Tile, false, false, T, Acc>);
  else if (p.transpose_a && !p.transpose_b) args(gemm_tiled_kernel<Tile, true, false, T, Acc>);
  else if (!p.transpose_a && p.transpose_b) args(gemm_tiled_kernel<Tile, false, true, T, Acc>);
  else args(gemm_tiled_kernel<Tile, true, true, T, Acc>);
  EMBER_CUDA_CHECK_LAUNCH("matmul");
}

template <class T>
void custom_gemm(const GemmProblem& p, const T* a, const T* b, T* c) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  if constexpr (std::is_same_v<T, double>) {
    launch_tiled<SmallTile, T, Acc>(p, a, b, c);
  } else {
    const int sms = sm_count();
    const int64_t large_tiles = p.batch * ((p.m + LargeTile::BM - 1) / LargeTile::BM) *
                                ((p.n + LargeTile::BN - 1) / LargeTile::BN);
    if (large_tiles >= sms) launch_tiled<LargeTile, T, Acc>(p, a, b, c);
    else launch_tiled<SmallTile, T, Acc>(p, a, b, c);
  }
}

// The problem in elements, from already-checked tensors (kernels/dispatch_matmul.cpp).
GemmProblem gemm_problem(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  GemmProblem p;
  p.transpose_a = transpose_a;
  p.transpose_b = transpose_b;
  p.m = transpose_a ? a.size(-1) : a.size(-2);
  p.n = transpose_b ? b.size(-2) : b.size(-1);
  p.k = transpose_a ? a.size(-2) : a.size(-1);
  p.batch = a.dim() == 3 ? a.size(0) : 1;
  p.stride_a = p.m * p.k;
  p.stride_b = b.dim() == 3 ? p.k * p.n : 0;  // a 2-D B is shared by every batch
  p.stride_c = p.m * p.n;
  if (p.batch > 1 && b.dim() == 2 && !transpose_a) {
    // [B, M, K] x [K, N] is one [B*M, K] x [K, N] GEMM: the batch's rows are contiguous.
    p.m *= p.batch;
    p.batch = 1;
    p.stride_a = p.stride_c = 0;
  }
  return p;
}

}  // namespace

void matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, const Tensor& c) {
  gemm(gemm_problem(a, b, transpose_a, transpose_b), a.dtype(), a.data_ptr(), b.data_ptr(), c.data_ptr(), a.device());
}

void gemm(const GemmProblem& p, DType dtype, const void* a, const void* b, void* c, Device device) {
  if (gemm_provider() == GemmProvider::cublas) {
    cublas_gemm(p, dtype, a, b, c, device);
    return;
  }
  dispatch_floating("matmul", dtype, [&](auto tag) {
    using T = device_t<decltype(tag)>;
    custom_gemm<T>(p, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c));
  });
}

}  // namespace ember::kernels::cuda
