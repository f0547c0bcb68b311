#pragma once
// `ember bench-train`: training speed and memory of one model on synthetic 28x28
// batches (the same loop as bench/peers/libtorch_train.cpp), with the memory
// techniques of `ember train` as flags. A short table, or with --json one JSON line:
//
//   ember bench-train --model convnet --batch 64 --threads 2 --steps 60 --warmup 10 --json
//   {"peer":"ember","model":"convnet","batch":64,"threads":2,"device":"cpu","images_per_s":812.3,
//    "ms_per_step":78.8,"precision":"fp32","checkpoint":"none","accum":1,
//    "peak_bytes":..., "peak_reserved_bytes":..., "peak_bytes_by_category":{"parameter":...,"activation":...}}
//   ember bench-train --model resnet20 --batch 128 --checkpoint sqrt     # what recompute saves and costs
//   ember bench-train --model convnet --batch 512 --memory-budget 48MiB  # the techniques chosen to fit
//   mpirun -np 2 ember bench-train --model convnet --threads 1   # data parallel: rank 0 prints the job's images/s
//
// The peaks are those of the timed steps (the statistics are reset after the warm-up);
// "data" holds the pool of synthetic batches the steps cycle through.
#include <cstdint>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/memory_session.h"
#include "apps/run_flags.h"

namespace CLI {
class App;
}

namespace ember::apps {

struct BenchTrainOptions {
  RunFlags run;                   // --model --batch --threads --optimizer --device, techniques, --memory-budget, --json
  int steps = 100;
  int warmup = 10;
  bool overlap = true;            // --no-overlap: data parallel sends its buckets after backward
  MemoryOptions memory;           // --memory-report, --memory-trace, --memory-limit, --memory-steps
};

CLI::App* add_bench_train_command(CLI::App& app, BenchTrainOptions& options);
// Runs the benchmark, prints the table (or the JSON line) and returns the JSON.
nlohmann::ordered_json bench_train_command(const BenchTrainOptions& options, std::ostream& out);

}  // namespace ember::apps
