#pragma once
// Deterministic reductions shared by reduce.cu and elementwise.cu (sum_to).
//
// block_reduce(v, combine): every thread of a kThreadsPerBlock block passes a
// value; all get the block's total back. A shared-memory tree in a fixed order,
// so the same input always gives the same bits.
//
// launch_reduce_rows(rows, row_size, lift, identity, combine, finish, ...):
// for each output row r, reduces lift(r, k) over k in [0, row_size) and calls
// finish(r, total). The caller's functors decide where element (r, k) lives and
// what is stored, so reduce_dim, argmax_dim and sum_to share one pair of kernels.
#include <cstdint>
#include <utility>

#include "kernels/cuda/device_utils.cuh"
#include "kernels/softmax_math.h"

namespace ember::kernels::cuda {

static_assert((kThreadsPerBlock & (kThreadsPerBlock - 1)) == 0, "the tree reduction halves the block");

struct SumCombine {
  template <class V> __device__ V operator()(V a, V b) const { return a + b; }
};

// max_takes (shared with the CPU): NaN wins, like PyTorch's max.
struct MaxCombine {
  template <class V> __device__ V operator()(V a, V b) const { return max_takes(b, a) ? b : a; }
};

// finish functor: out[r] = total / divisor (divisor 1 for sums and maxima, the row size for means).
template <class D, class C>
struct StoreRow {
  D* out;
  C divisor;
  __device__ void operator()(int64_t r, C total) const { store(out, r, total / divisor); }
};

// Must be called by every thread of the block (it synchronises), with blockDim.x == kThreadsPerBlock.
template <class V, class Combine>
__device__ V block_reduce(V value, Combine combine) {
  __shared__ V partial[kThreadsPerBlock];
  const unsigned t = threadIdx.x;
  partial[t] = value;
  __syncthreads();
  for (unsigned stride = kThreadsPerBlock / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] = combine(partial[t], partial[t + stride]);
    __syncthreads();
  }
  const V total = partial[0];
  __syncthreads();  // everyone has read partial[0] before a next call overwrites it
  return total;
}

// One block per row: the block's threads stride over the row, then combine.
template <class V, class Lift, class Combine, class Finish>
__global__ void reduce_rows_by_block_kernel(int64_t rows, int64_t row_size, Lift lift, V identity, Combine combine,
                                            Finish finish) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {  // uniform across the block
    V acc = identity;
    for (int64_t k = threadIdx.x; k < row_size; k += blockDim.x) acc = combine(acc, lift(r, k));
    acc = block_reduce(acc, combine);
    if (threadIdx.x == 0) finish(r, acc);
  }
}

// One thread per row: neighbouring threads read neighbouring elements when rows are
// the innermost dimension (reduce_dim with inner > 1), so loads coalesce.
template <class V, class Lift, class Combine, class Finish>
__global__ void reduce_rows_by_thread_kernel(int64_t rows, int64_t row_size, Lift lift, V identity,
                                             Combine combine, Finish finish) {
  for (int64_t r = thread_index(); r < rows; r += thread_count()) {
    V acc = identity;
    for (int64_t k = 0; k < row_size; ++k) acc = combine(acc, lift(r, k));
    finish(r, acc);
  }
}

// Below this many rows, one block per row still fills the GPU.
inline constexpr int64_t kRowsForThreadPerRow = 4096;

// row_is_contiguous: element (r, k + 1) follows (r, k) in memory (block per row reads coalesce).
template <class V, class Lift, class Combine, class Finish>
void launch_reduce_rows(const char* name, int64_t rows, int64_t row_size, bool row_is_contiguous, Lift lift,
                        V identity, Combine combine, Finish finish) {
  if (rows <= 0) return;
  if (row_is_contiguous || rows < kRowsForThreadPerRow) {
    const unsigned blocks = static_cast<unsigned>(rows < kMaxBlocks ? rows : kMaxBlocks);
    reduce_rows_by_block_kernel<<<blocks, kThreadsPerBlock, 0, current_stream()>>>(rows, row_size, lift, identity,
                                                                                    combine, finish);
  } else {
    reduce_rows_by_thread_kernel<<<blocks_for(rows), kThreadsPerBlock, 0, current_stream()>>>(
        rows, row_size, lift, identity, combine, finish);
  }
  EMBER_CUDA_CHECK_LAUNCH(name);
}

}  // namespace ember::kernels::cuda
