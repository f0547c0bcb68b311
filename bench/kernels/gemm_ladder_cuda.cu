// The CUDA SGEMM ladder's kernels (bench/kernels/gemm_ladder_cuda.h). Row-major n x n:
// a[i * n + k], b[k * n + j], c[i * n + j]. Each runs on ember's current stream.
#include <cuda_runtime.h>

#include "bench/kernels/gemm_ladder_cuda.h"
#include "kernels/cuda/cuda_check.cuh"

namespace ember::bench {
namespace {

using kernels::cuda::current_stream;

// 1. One thread per element of C. Consecutive threads (x) take consecutive columns, so a warp's
// reads of B's row and writes of C are coalesced; each reads all of A's row and B's column from
// global memory (L1/L2 catch some), 2 loads per multiply-add.
__global__ void naive_kernel(int n, const float* a, const float* b, float* c) {
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (row >= n || col >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += a[static_cast<int64_t>(row) * n + k] * b[static_cast<int64_t>(k) * n + col];
  c[static_cast<int64_t>(row) * n + col] = acc;
}

// 2. A block of 32 x 32 threads stages a 32 x 32 tile of A and of B in shared memory per step
// of k, then each thread reads its row and column from there: each global element is loaded
// once per block instead of once per thread (32x fewer global loads), still 2 shared loads
// per multiply-add.
constexpr int kSharedTile = 32;
__global__ void shared_tiles_kernel(int n, const float* a, const float* b, float* c) {
  __shared__ float as[kSharedTile][kSharedTile];
  __shared__ float bs[kSharedTile][kSharedTile];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kSharedTile + ty;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kSharedTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += kSharedTile) {
    as[ty][tx] = a[row * n + k0 + tx];
    bs[ty][tx] = b[static_cast<int64_t>(k0 + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < kSharedTile; ++k) acc += as[ty][k] * bs[k][tx];  // as: a broadcast; bs: a row, no conflict
    __syncthreads();
  }
  c[row * n + col] = acc;
}

// 3. A block of 256 threads owns a 64 x 64 tile of C; each thread 4 x 4 of it in registers. Per
// k it reads 4 values of A and 4 of B from shared memory for 16 multiply-adds (0.5 loads each,
// against 2). A is stored transposed, as[k][m], so a thread's 4 values of A lie side by side.
constexpr int kRegTile = 64, kRegK = 8, kRegMicro = 4;
__global__ void __launch_bounds__(256, 2) register_tiles_kernel(int n, const float* a, const float* b, float* c) {
  __shared__ float as[kRegK][kRegTile];
  __shared__ float bs[kRegK][kRegTile];
  const int tid = static_cast<int>(threadIdx.x);
  const int tr = tid / (kRegTile / kRegMicro), tc = tid % (kRegTile / kRegMicro);
  const float* a_block = a + static_cast<int64_t>(blockIdx.y) * kRegTile * n;
  const float* b_block = b + static_cast<int64_t>(blockIdx.x) * kRegTile;
  float acc[kRegMicro][kRegMicro] = {};
  for (int k0 = 0; k0 < n; k0 += kRegK) {
    for (int idx = tid; idx < kRegTile * kRegK; idx += 256) {  // 2 elements of each tile per thread
      const int m = idx / kRegK, ka = idx % kRegK;  // A: along its rows, 8 floats per row
      as[ka][m] = a_block[static_cast<int64_t>(m) * n + k0 + ka];
      const int kb = idx / kRegTile, j = idx % kRegTile;  // B: along its rows, coalesced
      bs[kb][j] = b_block[static_cast<int64_t>(k0 + kb) * n + j];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kRegK; ++k) {
      float ra[kRegMicro], rb[kRegMicro];
#pragma unroll
      for (int i = 0; i < kRegMicro; ++i) ra[i] = as[k][tr * kRegMicro + i];
#pragma unroll
      for (int j = 0; j < kRegMicro; ++j) rb[j] = bs[k][tc * kRegMicro + j];
#pragma unroll
      for (int i = 0; i < kRegMicro; ++i)
#pragma unroll
        for (int j = 0; j < kRegMicro; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
  float* c_block = c + (static_cast<int64_t>(blockIdx.y) * kRegTile + tr * kRegMicro) * n +
                   static_cast<int64_t>(blockIdx.x) * kRegTile + tc * kRegMicro;
#pragma unroll
  for (int i = 0; i < kRegMicro; ++i)
#pragma unroll
    for (int j = 0; j < kRegMicro; ++j) c_block[static_cast<int64_t>(i) * n + j] = acc[i][j];
}

// 4 and 5. A block of 256 threads owns a 128 x 128 tile of C, 8 x 8 per thread (64 multiply-adds
// per 16 shared loads per k, and 16-byte loads and stores: float4). One k step of 8 is one float4
// of A per thread (a row's 4 values, stored transposed into as[k][m]) and one float4 of B.
// With Buffers = 2 the next step's float4s are loaded from global memory into registers before
// this step's products and stored into the other shared buffer after them, so their latency hides
// behind the arithmetic, with one barrier per step instead of two.
constexpr int kVecTile = 128, kVecK = 8, kVecMicro = 8;

struct TileLoad {
  float4 a, b;
};

__device__ __forceinline__ TileLoad load_step(const float* a_block, const float* b_block, int n, int k0, int tid) {
  const int m = tid / 2, ka = (tid % 2) * 4;               // A: 128 rows x 2 float4
  const int kb = tid / (kVecTile / 4), j = (tid % (kVecTile / 4)) * 4;  // B: 8 rows x 32 float4
  return {*reinterpret_cast<const float4*>(a_block + static_cast<int64_t>(m) * n + k0 + ka),
          *reinterpret_cast<const float4*>(b_block + static_cast<int64_t>(k0 + kb) * n + j)};
}

__device__ __forceinline__ void store_step(const TileLoad& t, float (*as)[kVecTile], float (*bs)[kVecTile], int tid) {
  const int m = tid / 2, ka = (tid % 2) * 4;
  as[ka + 0][m] = t.a.x;
  as[ka + 1][m] = t.a.y;
  as[ka + 2][m] = t.a.z;
  as[ka + 3][m] = t.a.w;
  const int kb = tid / (kVecTile / 4), j = (tid % (kVecTile / 4)) * 4;
  *reinterpret_cast<float4*>(&bs[kb][j]) = t.b;
}

// Two blocks per multiprocessor (at most 128 registers a thread), so one block's barrier wait
// overlaps the other's products.
template <int Buffers>
__global__ void __launch_bounds__(256, 2) vectorized_kernel(int n, const float* a, const float* b, float* c) {
  __shared__ __align__(16) float as[Buffers][kVecK][kVecTile];
  __shared__ __align__(16) float bs[Buffers][kVecK][kVecTile];
  const int tid = static_cast<int>(threadIdx.x);
  const int tr = tid / (kVecTile / kVecMicro), tc = tid % (kVecTile / kVecMicro);
  const float* a_block = a + static_cast<int64_t>(blockIdx.y) * kVecTile * n;
  const float* b_block = b + static_cast<int64_t>(blockIdx.x) * kVecTile;
  float acc[kVecMicro][kVecMicro] = {};
  const auto products = [&](const float (*as_k)[kVecTile], const float (*bs_k)[kVecTile]) {
#pragma unroll
    for (int k = 0; k < kVecK; ++k) {
      float ra[kVecMicro], rb[kVecMicro];
      *reinterpret_cast<float4*>(&ra[0]) = *reinterpret_cast<const float4*>(&as_k[k][tr * kVecMicro]);
      *reinterpret_cast<float4*>(&ra[4]) = *reinterpret_cast<const float4*>(&as_k[k][tr * kVecMicro + 4]);
      *reinterpret_cast<float4*>(&rb[0]) = *reinterpret_cast<const float4*>(&bs_k[k][tc * kVecMicro]);
      *reinterpret_cast<float4*>(&rb[4]) = *reinterpret_cast<const float4*>(&bs_k[k][tc * kVecMicro + 4]);
#pragma unroll
      for (int i = 0; i < kVecMicro; ++i)
#pragma unroll
        for (int j = 0; j < kVecMicro; ++j) acc[i][j] += ra[i] * rb[j];
    }
  };
  if constexpr (Buffers == 1) {
    for (int k0 = 0; k0 < n; k0 += kVecK) {
      store_step(load_step(a_block, b_block, n, k0, tid), as[0], bs[0], tid);
      __syncthreads();
      products(as[0], bs[0]);
      __syncthreads();
    }
  } else {
    store_step(load_step(a_block, b_block, n, 0, tid), as[0], bs[0], tid);
    __syncthreads();
    for (int k0 = 0, cur = 0; k0 < n; k0 += kVecK, cur ^= 1) {
      const bool more = k0 + kVecK < n;
      TileLoad next{};
      if (more) next = load_step(a_block, b_block, n, k0 + kVecK, tid);  // in flight during the products
      products(as[cur], bs[cur]);
      // The other buffer was last read in the previous step, which every thread finished
      // before the barrier that ended it.
      if (more) store_step(next, as[cur ^ 1], bs[cur ^ 1], tid);
      __syncthreads();
    }
  }
  float* c_block = c + (static_cast<int64_t>(blockIdx.y) * kVecTile + tr * kVecMicro) * n +
                   static_cast<int64_t>(blockIdx.x) * kVecTile + tc * kVecMicro;
#pragma unroll
  for (int i = 0; i < kVecMicro; ++i) {
    float* row = c_block + static_cast<int64_t>(i) * n;
    *reinterpret_cast<float4*>(row) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    *reinterpret_cast<float4*>(row + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
  }
}

void check_size(int64_t n, int64_t multiple, const char* step) {
  EMBER_CHECK(n > 0 && n % multiple == 0 && n <= (int64_t{1} << 20),
              "gemm ladder " << step << ": n = " << n << " must be a positive multiple of " << multiple);
}

void launch_naive(int64_t n, const float* a, const float* b, float* c) {
  check_size(n, 1, "naive");
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>((n + 7) / 8));
  naive_kernel<<<grid, block, 0, current_stream()>>>(static_cast<int>(n), a, b, c);
  EMBER_CUDA_CHECK_LAUNCH("gemm ladder naive");
}

void launch_shared_tiles(int64_t n, const float* a, const float* b, float* c) {
  check_size(n, kSharedTile, "shared_tiles");
  const unsigned tiles = static_cast<unsigned>(n / kSharedTile);
  shared_tiles_kernel<<<dim3(tiles, tiles), dim3(kSharedTile, kSharedTile), 0, current_stream()>>>(
      static_cast<int>(n), a, b, c);
  EMBER_CUDA_CHECK_LAUNCH("gemm ladder shared_tiles");
}

void launch_register_tiles(int64_t n, const float* a, const float* b, float* c) {
  check_size(n, kRegTile, "register_tiles");
  const unsigned tiles = static_cast<unsigned>(n / kRegTile);
  register_tiles_kernel<<<dim3(tiles, tiles), 256, 0, current_stream()>>>(static_cast<int>(n), a, b, c);
  EMBER_CUDA_CHECK_LAUNCH("gemm ladder register_tiles");
}

template <int Buffers>
void launch_vectorized(int64_t n, const float* a, const float* b, float* c) {
  const char* name = Buffers == 1 ? "vectorized" : "double_buffered";
  check_size(n, kVecTile, name);
  const unsigned tiles = static_cast<unsigned>(n / kVecTile);
  vectorized_kernel<Buffers><<<dim3(tiles, tiles), 256, 0, current_stream()>>>(static_cast<int>(n), a, b, c);
  EMBER_CUDA_CHECK_LAUNCH(name);
}

}  // namespace

const std::vector<LadderStep>& ladder_steps() {
  static const std::vector<LadderStep> steps = {
      {"naive", 1, launch_naive},
      {"shared_tiles", kSharedTile, launch_shared_tiles},
      {"register_tiles", kRegTile, launch_register_tiles},
      {"vectorized", kVecTile, launch_vectorized<1>},
      {"double_buffered", kVecTile, launch_vectorized<2>},
  };
  return steps;
}

}  // namespace ember::bench
