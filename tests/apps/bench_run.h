#pragma once
// `ember bench-train` options as the tests start from: a model, a batch, timed steps after a
// warm-up, on the CPU, everything else the command's defaults.
//
//   BenchTrainOptions o = bench_run("lenet5", 8, /*steps=*/1, /*warmup=*/1);
//   o.run.technique.accum = 2;
#include <cstdint>
#include <string>

#include "apps/bench_train_command.h"

namespace ember::test {

inline apps::BenchTrainOptions bench_run(const std::string& model, int64_t batch, int steps, int warmup) {
  apps::BenchTrainOptions o;
  o.run.model = model;
  o.run.batch = batch;
  o.steps = steps;
  o.warmup = warmup;
  return o;
}

}  // namespace ember::test
