#include "apps/run_flags.h"

#include <CLI/CLI.hpp>

#include "apps/cli_checks.h"
#include "apps/memory_budget.h"
#include "apps/thread_count.h"
#include "models/zoo.h"
#include "optim/make_optimizer.h"

namespace ember::apps {

void add_run_flags(CLI::App* cmd, RunFlags& f, RunFlagUse use) {
  const bool train = use == RunFlagUse::train;
  cmd->add_option("--model", f.model, "Model from the zoo")->check(one_of(models::model_names()))->capture_default_str();
  CLI::Option* batch = cmd->add_option("--batch", f.batch, std::string("Batch size, the effective batch under --accum, of each process under mpirun") +
                                                               (train ? " (default: the model's recipe)" : ""))
                           ->check(positive_integer());
  CLI::Option* threads = cmd->add_option("--threads", f.threads,
                                         use == RunFlagUse::plan ? "CPU threads the step would run with"
                                         : train                 ? "CPU threads (0: OpenMP default)"
                                                                 : "CPU threads");
  // A plan runs no step here, and may be for a machine with more cores: no core count check.
  threads->check(use == RunFlagUse::plan ? positive_integer() : thread_count(train ? 0 : 1));
  CLI::Option* optimizer =
      cmd->add_option("--optimizer", f.optimizer,
                      train ? "sgd | adam | adamw (default: the model's recipe)" : "sgd (momentum 0.9) | adam | adamw")
          ->check(one_of(optim::optimizer_names()));
  CLI::Option* device = cmd->add_option(
      "--device", f.device,
      train ? "cpu | cuda | cuda:N (default: cuda when a GPU is available, else cpu)"
      : use == RunFlagUse::plan ? "cpu | cuda | cuda:N (no GPU needed to plan for one)"
                                : "cpu | cuda | cuda:N");
  if (!train) {  // train's defaults are "unset": the recipe's and the machine's
    batch->capture_default_str();
    optimizer->capture_default_str();
    device->capture_default_str();
  }
  threads->capture_default_str();
  add_technique_options(cmd, f.technique);
  cmd->add_option("--memory-budget", f.memory_budget,
                  std::string("Choose --precision, --checkpoint, --accum (and, with several ranks, --zero) so the step "
                              "fits this many bytes (e.g. 64MiB), at the least modelled slowdown") +
                      (use == RunFlagUse::train ? "; the data set counts too" : use == RunFlagUse::bench ? "; the batch pool counts too" : ""));
  cmd->add_flag("--json", f.json, train ? "Print one JSON document instead of the table and progress bar"
                                        : "Print one JSON line instead of the table");
}

train::TrainerOptions checked_techniques(const RunFlags& f) {
  if (!f.memory_budget.empty()) check_budget_chooses_techniques(f.technique);
  return trainer_options(f.technique, f.batch);
}

std::optional<train::BudgetFit> fit_run_budget(const RunFlags& f, train::Workload& workload, int threads) {
  if (f.memory_budget.empty()) return std::nullopt;
  train::BudgetFit fit = fit_budget_flag(f.memory_budget, f.technique, workload, f.model, threads);
  workload.trainer = fit.chosen->trainer;
  return fit;
}

}  // namespace ember::apps
