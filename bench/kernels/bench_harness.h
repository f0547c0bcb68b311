#pragma once
// What the kernel benchmarks (bench_matmul, bench_conv) share: their main, the --threads= flag,
// the timed loop that runs ours and a peer in the same iterations, the GFLOP/s counters and
// the registration every benchmark gets (manual time, 3 repetitions, aggregates only).
//
//   void bench_op(benchmark::State& state, int threads, double peak_gflops) {
//     const OmpThreadsScope omp(threads);
//     const Timings t = time_interleaved(state, [&] { return seconds_of(run_ours); },
//                                        [&] { return seconds_of(run_theirs); });
//     set_flop_counters(state, kFlops, t.ours_s, peak_gflops);  // GFLOPS, peak_frac
//     set_peer_counters(state, "torch", kFlops, t);            // torch_GFLOPS, ours/torch
//   }
//   int main(int argc, char** argv) {
//     std::vector<int> threads;
//     return bench_main(argc, argv, "bench_op", [&](int* c, char** v) { threads = take_flags(c, v); },
//                       [&] { for (int n : threads) register_benchmark("op/threads:" + std::to_string(n),
//                                 [=](benchmark::State& s) { bench_op(s, n, 100.0); }, benchmark::kMillisecond); });
//   }
#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace ember::bench {

// Every benchmark runs this many repetitions and reports their median (and mean, stddev, cv).
constexpr int kRepetitions = 3;

// Seconds since construction, by the steady clock.
class Stopwatch {
 public:
  double seconds() const;

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Seconds one call of fn takes.
double seconds_of(const std::function<void()>& fn);

// OpenMP's thread count for a scope (OpenBLAS's OpenMP build reads it on every call); the
// previous count comes back at scope exit.
class OmpThreadsScope {
 public:
  explicit OmpThreadsScope(int threads);
  ~OmpThreadsScope();
  OmpThreadsScope(const OmpThreadsScope&) = delete;
  OmpThreadsScope& operator=(const OmpThreadsScope&) = delete;

 private:
  int previous_threads_;
};

// Seconds summed over a benchmark's iterations: ours and the peer's (0 without one).
struct Timings {
  double ours_s = 0.0;
  double peer_s = 0.0;
};

// The benchmark's loop. Each iteration runs ours() then peer() when there is one (interleaved,
// so clock and thermal drift hit both alike); each returns the seconds it measured, and ours'
// is the iteration time Google Benchmark reports (register_benchmark uses manual time).
Timings time_interleaved(benchmark::State& state, const std::function<double()>& ours,
                         const std::function<double()>& peer = {});

// GFLOP/s of `flops` per iteration over the state's iterations in `seconds`.
double gflops_of(const benchmark::State& state, double flops, double seconds);
// GFLOPS and peak_frac (of peak_gflops): plain counters from our own timing (Google
// Benchmark's rates would print a "/s" suffix).
void set_flop_counters(benchmark::State& state, double flops, double seconds, double peak_gflops);
// A peer timed in the same iterations: <peer>_GFLOPS, <peer>_peak_frac when peak_gflops is
// given, and ours/<peer>, the throughput ratio (above 1: ours is faster).
void set_peer_counters(benchmark::State& state, const std::string& peer, double flops, const Timings& t,
                       double peak_gflops = 0.0);

// Registers fn as `name`, timed by its own clock (manual time) in `unit`, kRepetitions
// repetitions reported as aggregates only.
benchmark::internal::Benchmark* register_benchmark(const std::string& name,
                                                   const std::function<void(benchmark::State&)>& fn,
                                                   benchmark::TimeUnit unit);

// Takes --threads=1,2 (OpenMP thread counts; the flag may repeat) and every argument
// take_other accepts out of argv, keeping the rest in order for Google Benchmark, which
// rejects flags it does not know. Returns the thread counts, OpenMP's maximum when none is
// given. A bad count throws ember::Error.
std::vector<int> take_flags(int* argc, char** argv, const std::function<bool(const std::string& arg)>& take_other = {});

// A benchmark program's main: parse_flags takes the program's own flags out of argv (an
// ember::Error there prints "<program>: <what>" and returns 2), then Google Benchmark reads
// its own, register_all registers the benchmarks and they run.
int bench_main(int argc, char** argv, const char* program, const std::function<void(int* argc, char** argv)>& parse_flags,
               const std::function<void()>& register_all);

}  // namespace ember::bench
