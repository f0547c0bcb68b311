#pragma once
// --memory-budget on the command line: the flag's checks and the sentences `ember train`,
// `bench-train` and `plan` print about the choice. The choosing itself is the library's
// (train/plan/budget_fit.h: candidates, slowdown model, headroom).
//
//   train::BudgetFit fit = fit_budget_flag("64MiB", workload, /*threads=*/2);  // throws when nothing fits
//   std::cout << chosen_line(fit, workload.batch) << "\n";
//   // "memory budget 64.00 MiB: fp32, checkpoint sqrt, accum 4 (micro-batch 64), predicted step peak ..."
#include <cstddef>
#include <cstdint>
#include <string>

#include "apps/technique_options.h"
#include "train/plan/budget_fit.h"

namespace ember::apps {

// --memory-budget chooses the techniques itself: throws when one was set by a flag too.
void check_budget_chooses_techniques(const TechniqueOptions& technique);
// "fp16, checkpoint sqrt, accum 4 (micro-batch 64)".
std::string describe(const train::TrainerOptions& trainer, int64_t batch);
// --memory-budget as plan, train and bench-train take it: refuses technique flags beside it,
// parses `text` (errors name the flag), fits, and throws nothing_fits_message when nothing
// does, so the result has a chosen candidate. `model` names the model in that message.
train::BudgetFit fit_budget_flag(const std::string& text, const TechniqueOptions& technique,
                                 const train::Workload& workload, const std::string& model, int threads);
// "memory budget 64.00 MiB: fp32, checkpoint none, accum 8 (micro-batch 64), predicted step
// peak 56.32 MiB allocated, 60.00 MiB reserved, modelled slowdown 1.35x".
std::string chosen_line(const train::BudgetFit& fit, int64_t batch);
// The error when nothing fits: the budget, the smallest possible peak and its settings.
std::string nothing_fits_message(const train::BudgetFit& fit, const std::string& model, int64_t batch);
// What to do after an out-of-memory, from the planner instead of in general: the predicted
// peak (reserved) as run and with each technique the step does not use yet, one change at
// a time (train::technique_changes), then what --memory-budget would choose for a device of
// `capacity` bytes (0: not known, not simulated).
//   "Predicted step peak (reserved, ember plan): as run 98.00 MiB; --precision fp16: ~52.10 MiB;
//    --checkpoint sqrt: ~41.00 MiB; --accum 2: ~60.00 MiB; --accum 4: ~33.00 MiB. With this
//    device's 64MiB, --memory-budget 64MiB would run fp32, checkpoint sqrt, accum 1 (micro-batch
//    64) at ~41.00 MiB."
std::string out_of_memory_advice(const train::Workload& as_run, int threads, size_t capacity);
// Makes an out-of-memory in the trainer's step end with that advice (Trainer::set_out_of_memory_advice).
void advise_on_out_of_memory(train::Trainer& trainer, const train::Workload& as_run, int threads);

}  // namespace ember::apps
