#pragma once
// The flags `ember train`, `ember bench-train` and `ember plan` share, and the preamble each of
// them runs with them: the techniques the flags name (checked before anything loads), or
// --memory-budget's choice (train/plan/budget_fit.h, from steps of the run's own workload).
//
//   RunFlags flags;                                       // the command's defaults first
//   add_run_flags(cmd, flags, RunFlagUse::bench);
//   ...
//   train::Workload w = zoo_workload(flags.model, flags.batch, flags.optimizer, checked_techniques(flags), device);
//   std::optional<train::BudgetFit> fit = fit_run_budget(flags, w, flags.threads);  // w.trainer: the choice
#include <cstdint>
#include <optional>
#include <string>

#include "apps/technique_options.h"
#include "train/plan/budget_fit.h"

namespace CLI {
class App;
}

namespace ember::apps {

struct RunFlags {
  std::string model = "lenet5";
  int64_t batch = 64;
  int threads = 1;
  std::string optimizer = "sgd";
  std::string device = "cpu";
  TechniqueOptions technique;  // --precision --checkpoint --accum
  std::string memory_budget;   // --memory-budget
  bool json = false;
};

// How a command uses them: train's unset batch and optimizer come from the model's recipe and its
// device from the machine; bench-train runs steps here; plan runs none (its --threads is the
// machine it plans for, not checked against this one's cores).
enum class RunFlagUse { train, bench, plan };

// Registers --model --batch --threads --optimizer --device --precision --checkpoint --accum
// --memory-budget --json.
void add_run_flags(CLI::App* command, RunFlags& flags, RunFlagUse use);
// The techniques the flags name, as TrainerOptions; throws in the flags' words for a bad value or
// a technique flag beside --memory-budget. Nothing has loaded yet.
train::TrainerOptions checked_techniques(const RunFlags& flags);
// With --memory-budget: fits the budget for `workload` (its trainer options become the chosen
// ones) and returns the fit; throws when nothing fits. Without: nothing.
std::optional<train::BudgetFit> fit_run_budget(const RunFlags& flags, train::Workload& workload, int threads);

}  // namespace ember::apps
