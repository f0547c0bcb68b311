#include "kernels/cpu/fp32_peak.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/gemm_kernels.h"

namespace ember::kernels::cpu {
namespace {

// Rounds of the probe per run: 12 vector FMAs each, ~5 ms on one core of a 2-FMA-unit CPU. The
// best of many short runs: on a shared machine a short run is likelier to go undisturbed.
constexpr int64_t kIterations = 2'500'000;
constexpr int kRuns = 10;

double probe(CpuIsa isa, int64_t iterations) {
#ifdef EMBER_X86_KERNELS
  if (isa == CpuIsa::avx512) return fma_probe_avx512(iterations);
  if (isa == CpuIsa::avx2) return fma_probe_avx2(iterations);
#endif
  (void)isa;
  return fma_probe_portable(iterations);
}

}  // namespace

double measured_fp32_peak_gflops(int threads) {
  const CpuIsa isa = cpu_isa();
  threads = std::max(threads, 1);
  double best = 0.0;
  for (int run = 0; run < kRuns; ++run) {
    double flops = 0.0;
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
    flops += probe(isa, kIterations);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, flops / seconds * 1e-9);
  }
  return best;
}

}  // namespace ember::kernels::cpu
