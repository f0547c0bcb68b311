// The kernel benchmarks' shared harness (bench/kernels/bench_harness.h).
#include "bench/kernels/bench_harness.h"

#include <omp.h>

#include <cstring>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "core/parse_integer.h"

namespace ember::bench {

namespace {
constexpr int64_t kMaxThreads = 1024;
}  // namespace

double Stopwatch::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double seconds_of(const std::function<void()>& fn) {
  const Stopwatch watch;
  fn();
  return watch.seconds();
}

OmpThreadsScope::OmpThreadsScope(int threads) : previous_threads_(omp_get_max_threads()) {
  omp_set_num_threads(threads);
}

OmpThreadsScope::~OmpThreadsScope() { omp_set_num_threads(previous_threads_); }

Timings time_interleaved(benchmark::State& state, const std::function<double()>& ours,
                         const std::function<double()>& peer) {
  Timings t;
  for (auto _ : state) {
    const double s = ours();
    t.ours_s += s;
    if (peer) t.peer_s += peer();
    state.SetIterationTime(s);
  }
  return t;
}

double gflops_of(const benchmark::State& state, double flops, double seconds) {
  return flops * 1e-9 * static_cast<double>(state.iterations()) / seconds;
}

void set_flop_counters(benchmark::State& state, double flops, double seconds, double peak_gflops) {
  const double gflops = gflops_of(state, flops, seconds);
  state.counters["GFLOPS"] = gflops;
  state.counters["peak_frac"] = gflops / peak_gflops;
}

void set_peer_counters(benchmark::State& state, const std::string& peer, double flops, const Timings& t,
                       double peak_gflops) {
  const double gflops = gflops_of(state, flops, t.peer_s);
  state.counters[peer + "_GFLOPS"] = gflops;
  if (peak_gflops > 0.0) state.counters[peer + "_peak_frac"] = gflops / peak_gflops;
  state.counters["ours/" + peer] = t.peer_s / t.ours_s;
}

benchmark::internal::Benchmark* register_benchmark(const std::string& name,
                                                   const std::function<void(benchmark::State&)>& fn,
                                                   benchmark::TimeUnit unit) {
  return benchmark::RegisterBenchmark(name.c_str(), fn)
      ->UseManualTime()
      ->Unit(unit)
      ->Repetitions(kRepetitions)
      ->ReportAggregatesOnly(true);
}

std::vector<int> take_flags(int* argc, char** argv, const std::function<bool(const std::string& arg)>& take_other) {
  std::vector<int> threads;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--threads=", 0) == 0) {
      std::stringstream list(arg.substr(std::strlen("--threads=")));
      for (std::string item; std::getline(list, item, ',');)
        threads.push_back(static_cast<int>(parse_integer(item, "--threads", 1, kMaxThreads)));
    } else if (!take_other || !take_other(arg)) {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  if (threads.empty()) threads.push_back(omp_get_max_threads());
  return threads;
}

int bench_main(int argc, char** argv, const char* program, const std::function<void(int* argc, char** argv)>& parse_flags,
               const std::function<void()>& register_all) {
  try {
    parse_flags(&argc, argv);
  } catch (const Error& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace ember::bench
