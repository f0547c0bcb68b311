#pragma once
// The CUDA SGEMM ladder: C = A B for square row-major fp32 matrices, n x n, each step a
// textbook kernel one idea better than the one before, kept runnable as teaching code
// (bench_matmul times each against cuBLAS; docs/kernels.md reads them with measured numbers).
// ember's own CUDA matmul is kernels/cuda/matmul.cu; these are not used by the library.
//
//   for (const LadderStep& step : ladder_steps())
//     if (step.supports(n)) step.launch(n, a, b, c);  // device pointers, on ember's current stream
//
// The steps:
//   naive           one thread per element of C, A's row and B's column read from global memory
//   shared_tiles    32 x 32 tiles of A and B staged in shared memory, one element of C per thread
//   register_tiles  a 64 x 64 tile of C per block, 4 x 4 per thread in registers, k steps of 8
//   vectorized      a 128 x 128 tile, 8 x 8 per thread, 16-byte loads, A stored transposed
//   double_buffered the same with two shared buffers: the next tile loads while this one computes
#include <cstdint>
#include <vector>

namespace ember::bench {

struct LadderStep {
  const char* name;
  int64_t multiple;  // n must be a multiple of this (the tiled steps do not check bounds)
  // Launches the step's kernel and checks the launch (throws ember::Error on a bad one or a
  // size it does not support).
  void (*launch)(int64_t n, const float* a, const float* b, float* c);
  bool supports(int64_t n) const { return n > 0 && n % multiple == 0; }
};

const std::vector<LadderStep>& ladder_steps();

}  // namespace ember::bench
