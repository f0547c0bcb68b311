#pragma once
// `ember plan`: the peak memory of a training step, by category, predicted before any
// math runs (train/plan/step_plan.h: the real code on shape-only tensors), for the same
// flags `ember bench-train` takes; a table, or with --json one JSON line.
//
//   ember plan --model resnet20 --batch 128 --checkpoint sqrt
//   ember plan --model convnet --batch 256 --precision fp16 --optimizer adam --json
//   ember plan --model resnet20 --batch 512 --memory-budget 64MiB   # which settings fit, at what cost
//   ember plan --model convnet --optimizer adam --ranks 4 --zero 2    # one rank of `mpirun -np 4 ember train`
#include <cstdint>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/run_flags.h"

namespace CLI {
class App;
}

namespace ember::apps {

struct PlanOptions {
  RunFlags run;   // --model --batch --threads --optimizer --device, techniques, --memory-budget, --json
  int ranks = 1;  // --ranks: plan one rank of a data-parallel job of this many processes
};

CLI::App* add_plan_command(CLI::App& app, PlanOptions& options);
nlohmann::ordered_json plan_command(const PlanOptions& options, std::ostream& out);

}  // namespace ember::apps
