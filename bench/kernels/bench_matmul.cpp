// Square fp32 matmul throughput, C[n, n] = A[n, n] B[n, n], through kernels::matmul:
//   - CPU (kernels/cpu/gemm.h: ember's GEMM, or OpenBLAS under EMBER_CPU_GEMM=openblas) at each
//     requested OpenMP thread count, n = 256..2048 (4096 on request: seconds per product on 2 cores);
//   - GPU, when one is present: ours (GemmProvider::custom) and cuBLAS interleaved
//     in the same iterations, n = 256..4096; and each step of the CUDA SGEMM ladder
//     (bench/kernels/gemm_ladder_cuda.h) against cuBLAS, n = 1024..4096 (naive to 2048), each
//     step's product first checked against cuBLAS's within the fp32 rounding bound.
// Counters: GFLOPS (2 n^3 flops per product, per second), peak_frac (of the fp32 peak: on the CPU
// measured at start on as many threads, kernels/cpu/fp32_peak.h, unless EMBER_CPU_PEAK_GFLOPS says),
// and on the GPU cublas_GFLOPS, cublas_peak_frac and ours/cublas (throughput ratio:
// above 1 means ours is faster).
// Every benchmark runs 3 repetitions and reports their median (and mean, stddev).
//
//   bench_matmul                                   # CPU with all threads, GPU if present
//   bench_matmul --threads=1,2 --benchmark_filter=cpu --benchmark_enable_random_interleaving=true
//   bench_matmul --cpu-max-size=4096               # or EMBER_BENCH_CPU_MAX_SIZE=4096
//   EMBER_CPU_PEAK_GFLOPS=231 EMBER_GPU_PEAK_GFLOPS=67000 bench_matmul
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "bench/kernels/bench_harness.h"
#include "core/cuda_runtime.h"
#include "core/error.h"
#include "core/parse_integer.h"
#include "kernels/cpu/fp32_peak.h"
#include "kernels/factories.h"
#include "kernels/ops.h"
#include "kernels/providers.h"
#ifdef EMBER_HAVE_CUDA
#include "bench/kernels/gemm_ladder_cuda.h"
#endif

namespace {

using ember::Tensor;
using ember::kernels::GemmProvider;
using namespace ember::bench;

// H100 SXM fp32 without tensor cores (~67 TFLOP/s).
constexpr double kDefaultGpuPeakGflops = 67000.0;
constexpr int64_t kDefaultCpuMaxSize = 2048;
// A timed GPU region runs products until it holds about this many flops, so that the
// launch and synchronisation overhead (~10 us) does not swamp small sizes.
constexpr double kGpuFlopsPerRegion = 2e9;
const std::vector<int64_t> kSizes = {256, 512, 1024, 2048, 4096};

// A peak in GFLOP/s from the environment: a finite positive number (atof read "inf" and
// "abc" silently, and a peak of 0 or inf makes every peak_frac meaningless).
double env_gflops(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const double gflops = std::strtod(v, &end);
  EMBER_CHECK(*end == '\0' && std::isfinite(gflops) && gflops > 0,
              name << "='" << v << "': expected a finite positive number of GFLOP/s");
  return gflops;
}

// The largest CPU size, from EMBER_BENCH_CPU_MAX_SIZE or --cpu-max-size= (plain digits:
// "1e30" and "inf" used to become a garbage limit through atof and a float-to-int cast).
int64_t max_size(const char* text, const char* what) { return ember::parse_integer(text, what, 1, kSizes.back()); }

double flops_of(int64_t n) { return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n); }

struct Options {
  std::vector<int> threads;  // OpenMP thread counts for the CPU runs
  int64_t cpu_max_size = kDefaultCpuMaxSize;
  double cpu_peak_gflops = 0.0;  // 0: measured per thread count
  double gpu_peak_gflops = kDefaultGpuPeakGflops;
};

// Reads the environment and takes --threads= and --cpu-max-size= out of argv.
Options parse_options(int* argc, char** argv) {
  Options o;
  const char* env_max_size = std::getenv("EMBER_BENCH_CPU_MAX_SIZE");
  if (env_max_size != nullptr && *env_max_size != '\0') o.cpu_max_size = max_size(env_max_size, "EMBER_BENCH_CPU_MAX_SIZE");
  o.cpu_peak_gflops = env_gflops("EMBER_CPU_PEAK_GFLOPS", 0.0);
  o.gpu_peak_gflops = env_gflops("EMBER_GPU_PEAK_GFLOPS", kDefaultGpuPeakGflops);
  o.threads = take_flags(argc, argv, [&o](const std::string& arg) {
    if (arg.rfind("--cpu-max-size=", 0) != 0) return false;
    o.cpu_max_size = max_size(arg.c_str() + std::strlen("--cpu-max-size="), "--cpu-max-size");
    return true;
  });
  return o;
}

void bench_cpu(benchmark::State& state, int threads, double peak_gflops) {
  const OmpThreadsScope omp(threads);
  const int64_t n = state.range(0);
  const Tensor a = ember::randn({n, n});
  const Tensor b = ember::randn({n, n});
  benchmark::DoNotOptimize(ember::kernels::matmul(a, b, false, false).data_ptr());  // warm-up: BLAS buffers, pages
  const Timings t = time_interleaved(state, [&] {
    const Stopwatch watch;
    Tensor c = ember::kernels::matmul(a, b, false, false);
    benchmark::DoNotOptimize(c.data_ptr());
    return watch.seconds();  // before c is freed, as it always was
  });
  set_flop_counters(state, flops_of(n), t.ours_s, peak_gflops);
  state.SetLabel("omp_threads=" + std::to_string(threads) + " peak=" + std::to_string(static_cast<int>(peak_gflops)) +
                 "GFLOPS");
}

// Seconds for `reps` products with one provider, between two synchronisations.
double time_gpu_products(const Tensor& a, const Tensor& b, GemmProvider provider, int reps) {
  ember::kernels::set_gemm_provider(provider);
  ember::cuda::synchronize();
  const Stopwatch watch;
  for (int r = 0; r < reps; ++r) {
    Tensor c = ember::kernels::matmul(a, b, false, false);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  ember::cuda::synchronize();
  return watch.seconds();
}

// A GPU benchmark's square operands and how many products one timed region runs; false (the
// benchmark skipped) without a GPU.
struct GpuProblem {
  int64_t n = 0;
  double flops = 0.0;
  int reps = 1;
  Tensor a, b;
};
bool gpu_problem(benchmark::State& state, GpuProblem* p) {
  if (!ember::cuda::is_available()) {
    state.SkipWithError("no GPU on this machine");
    return false;
  }
  p->n = state.range(0);
  p->flops = flops_of(p->n);
  p->reps = static_cast<int>(std::clamp(kGpuFlopsPerRegion / p->flops, 1.0, 256.0));
  p->a = ember::randn({p->n, p->n}).to(ember::kCUDA);
  p->b = ember::randn({p->n, p->n}).to(ember::kCUDA);
  return true;
}

// The counters of a GPU benchmark timed against cuBLAS, and its label.
void set_gpu_counters(benchmark::State& state, double flops, const Timings& t, double peak_gflops) {
  set_flop_counters(state, flops, t.ours_s, peak_gflops);
  set_peer_counters(state, "cublas", flops, t, peak_gflops);  // cublas_GFLOPS, cublas_peak_frac, ours/cublas
  state.SetLabel(ember::cuda::device_name(0) + " peak=" + std::to_string(static_cast<int>(peak_gflops)) + "GFLOPS");
}

void bench_gpu(benchmark::State& state, double peak_gflops) {
  GpuProblem p;
  if (!gpu_problem(state, &p)) return;
  const Tensor &a = p.a, &b = p.b;
  const int reps = p.reps;
  const GemmProvider previous = ember::kernels::gemm_provider();
  try {  // Warm-up: module loading, the cuBLAS handle and its heuristics, the caching allocator.
    time_gpu_products(a, b, GemmProvider::custom, 1);
    time_gpu_products(a, b, GemmProvider::cublas, 1);
  } catch (const ember::Error& e) {  // e.g. a provider that is not written yet
    ember::kernels::set_gemm_provider(previous);
    state.SkipWithError(e.what());
    return;
  }
  const Timings t = time_interleaved(
      state, [&] { return time_gpu_products(a, b, GemmProvider::custom, reps) / reps; },
      [&] { return time_gpu_products(a, b, GemmProvider::cublas, reps) / reps; });
  ember::kernels::set_gemm_provider(previous);
  set_gpu_counters(state, p.flops, t, peak_gflops);
}

#ifdef EMBER_HAVE_CUDA
const std::vector<int64_t> kLadderSizes = {1024, 2048, 4096};
constexpr int64_t kNaiveMaxSize = 2048;  // the naive step takes ~0.1 s a product at 4096

// Throws unless every element of `c` lies within the fp32 bound of cuBLAS's product: both sum n
// products in some order, each within gamma(n) |A| |B| of the exact one (Higham 3.5), so within
// twice that of each other; |A| |B| comes from cuBLAS too, on the absolute values.
void check_ladder_step(const LadderStep& step, const Tensor& c, const Tensor& reference, const Tensor& magnitude) {
  const std::vector<float> got = c.to(ember::kCPU).to_vector<float>();
  const std::vector<float> want = reference.to(ember::kCPU).to_vector<float>();
  const std::vector<float> size = magnitude.to(ember::kCPU).to_vector<float>();
  const int64_t n = c.size(0);
  const double u = std::ldexp(1.0, -24), gamma = static_cast<double>(n) * u / (1.0 - static_cast<double>(n) * u);
  size_t worst = 0;
  double worst_share = -1.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound = 2.0 * gamma * static_cast<double>(size[i]) * 1.01;  // 1%: the bound's own f32 rounding
    const double share = std::fabs(static_cast<double>(got[i]) - want[i]) / bound;
    if (!(share <= worst_share)) worst = i, worst_share = share;  // NaN lands here too
  }
  EMBER_CHECK(worst_share <= 1.0, "gemm ladder " << step.name << " at n = " << n << ": element (" << worst / n << ", "
                                                << worst % n << ") is " << got[worst] << ", cuBLAS " << want[worst]
                                                << ": " << worst_share << " times the rounding bound");
}

// Seconds for `reps` products of one ladder step, between two synchronisations.
double time_ladder_products(const LadderStep& step, const Tensor& a, const Tensor& b, const Tensor& c, int reps) {
  ember::cuda::synchronize();
  const Stopwatch watch;
  for (int r = 0; r < reps; ++r) step.launch(a.size(0), a.data<float>(), b.data<float>(), c.data<float>());
  ember::cuda::synchronize();
  return watch.seconds();
}

void bench_ladder(benchmark::State& state, const LadderStep& step, double peak_gflops) {
  GpuProblem p;
  if (!gpu_problem(state, &p)) return;
  const Tensor &a = p.a, &b = p.b;
  const int64_t n = p.n;
  const int reps = p.reps;
  // NaN first: an element the step never writes fails the check.
  const Tensor c = ember::full({n, n}, std::nan(""), ember::TensorOptions().device(ember::kCUDA));
  const GemmProvider previous = ember::kernels::gemm_provider();
  try {
    ember::kernels::set_gemm_provider(GemmProvider::cublas);
    const Tensor reference = ember::kernels::matmul(a, b, false, false);
    const Tensor magnitude = ember::kernels::matmul(ember::abs(a), ember::abs(b), false, false);
    time_ladder_products(step, a, b, c, 1);  // also the warm-up
    check_ladder_step(step, c, reference, magnitude);
    time_gpu_products(a, b, GemmProvider::cublas, 1);
  } catch (const ember::Error& e) {
    ember::kernels::set_gemm_provider(previous);
    state.SkipWithError(e.what());
    return;
  }
  const Timings t = time_interleaved(
      state, [&] { return time_ladder_products(step, a, b, c, reps) / reps; },
      [&] { return time_gpu_products(a, b, GemmProvider::cublas, reps) / reps; });
  ember::kernels::set_gemm_provider(previous);
  set_gpu_counters(state, p.flops, t, peak_gflops);
}
#endif

void register_benchmarks(const Options& o) {
  for (int threads : o.threads) {
    auto* bm = register_benchmark(
        "matmul_cpu_f32/omp_threads:" + std::to_string(threads),
        [threads, peak = o.cpu_peak_gflops > 0.0 ? o.cpu_peak_gflops : ember::kernels::cpu::measured_fp32_peak_gflops(threads)](
            benchmark::State& s) { bench_cpu(s, threads, peak); },
        benchmark::kMillisecond);
    for (int64_t n : kSizes)
      if (n <= o.cpu_max_size) bm->Arg(n);
    // Process CPU time sums every OpenMP thread (the default counts the main thread only).
    bm->MeasureProcessCPUTime();
  }
  if (!ember::cuda::compiled_with_cuda()) return;  // a CUDA build without a GPU reports the skip
  auto* gpu = register_benchmark(
      "matmul_cuda_f32/ours_vs_cublas", [peak = o.gpu_peak_gflops](benchmark::State& s) { bench_gpu(s, peak); },
      benchmark::kMicrosecond);
  for (int64_t n : kSizes) gpu->Arg(n);
#ifdef EMBER_HAVE_CUDA
  for (const LadderStep& step : ladder_steps()) {
    auto* bm = register_benchmark(
        std::string("matmul_cuda_f32/ladder:") + step.name,
        [&step, peak = o.gpu_peak_gflops](benchmark::State& s) { bench_ladder(s, step, peak); }, benchmark::kMicrosecond);
    for (int64_t n : kLadderSizes)
      if (step.supports(n) && (n <= kNaiveMaxSize || step.multiple > 1)) bm->Arg(n);
  }
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  return bench_main(
      argc, argv, "bench_matmul", [&](int* c, char** v) { options = parse_options(c, v); },
      [&] { register_benchmarks(options); });
}
