#pragma once
// parallel_for over [0, n) in chunks on OpenMP threads; runs inline when the
// work is small (threads cost more than they save below ~32k elements).
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace ember::kernels::cpu {

inline constexpr int64_t kParallelGrain = 32768;

template <class Fn>
void parallel_for(int64_t n, int64_t grain, const Fn& fn) {
  if (n <= 0) return;
  const int threads = omp_get_max_threads();
  if (n <= grain || threads == 1 || omp_in_parallel()) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    fn(begin, end);
  }
}

}  // namespace ember::kernels::cpu
