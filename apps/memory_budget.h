#pragma once
// --memory-budget: the memory techniques that make a training step fit a budget, chosen from
// predictions (apps/step_planner.h), at the least expected slowdown. The effective batch, and
// so what training computes, stays the one asked for: only how the step is run changes.
//
//   BudgetFit fit = fit_memory_budget(spec, /*threads=*/2, 64 << 20);
//   if (fit.chosen) spec.technique = fit.chosen->technique;   // e.g. fp32, checkpoint sqrt, accum 4
//
// The slowdown model (relative to fp32, no checkpointing, one micro-batch):
//   checkpoint sqrt  x 4/3: recompute is about one extra forward of the checkpointed part,
//                    and a forward is about a third of a step (backward ~ two forwards);
//   accum k          x (1 + 0.05 (k - 1)): each extra micro-batch costs launch and
//                    per-call overhead; small batches also use threads and caches less well;
//   fp16             x 2.5 on the CPU (storage only: every op widens, docs/memory.md part 2),
//                    x 1 on a GPU (half the bytes moved; tensor cores not assumed).
// The candidates are tried cheapest first; the first whose simulated step fits wins.
// The step is simulated under the budget itself, so the allocator makes the choices the
// real run will (which segments to reserve, when to free the cache), and its reserved peak
// must leave an eighth of the budget free (budget_headroom): a real run allocates in an
// order the simulation cannot see (the loader thread prepares batches while the step runs,
// the epoch's last batch is smaller, evaluation follows). On bench/budget_sweep.sh's 80
// runs, choosing right up to the budget left two of them out of memory and measured up to
// 6 MiB above the prediction.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "apps/bench_workload.h"
#include "apps/step_planner.h"

namespace ember::apps {

struct BudgetCandidate {
  TechniqueOptions technique;
  double slowdown = 1.0;  // the model above
  StepPrediction prediction;
  bool tried = false;     // simulated (candidates after the chosen one are not)
};

struct BudgetFit {
  size_t budget = 0;                        // bytes
  std::vector<BudgetCandidate> candidates;  // in the order tried
  std::optional<BudgetCandidate> chosen;    // none fits: see smallest
  BudgetCandidate smallest;                 // the candidate with the smallest peak (simulated without a limit)
};

// --memory-budget chooses the techniques itself: throws when one was set by a flag too.
void check_budget_chooses_techniques(const TechniqueOptions& technique);
double modelled_slowdown(const TechniqueOptions& technique, Device device);
// What a candidate's simulated step must leave free of the budget.
size_t budget_headroom(size_t budget);
// Every combination of precision, checkpoint (none, sqrt) and accum (the divisors of the
// batch that leave micro-batches of at least 4) for spec, cheapest first. spec.technique is ignored.
std::vector<BudgetCandidate> budget_candidates(const WorkloadSpec& spec);
// Simulates the candidates under a device of `budget` bytes until one fits.
BudgetFit fit_memory_budget(const WorkloadSpec& spec, int threads, size_t budget);
// --memory-budget as plan, train and bench-train take it: refuses technique flags beside it,
// parses `text` (errors name the flag), fits, and throws nothing_fits_message when nothing
// does, so the result has a chosen candidate.
BudgetFit fit_budget_flag(const std::string& text, const WorkloadSpec& spec, int threads);
// "fp16, checkpoint sqrt, accum 4 (micro-batch 64)".
std::string describe(const TechniqueOptions& technique, int64_t batch);
// "memory budget 64.00 MiB: fp32, checkpoint none, accum 8 (micro-batch 64), predicted step
// peak 56.32 MiB allocated, 60.00 MiB reserved, modelled slowdown 1.35x".
std::string chosen_line(const BudgetFit& fit, int64_t batch);
// The error when nothing fits: the budget, the smallest possible peak and its settings.
std::string nothing_fits_message(const BudgetFit& fit, const WorkloadSpec& spec);
// What to do after an out-of-memory, from the planner instead of in general: the predicted
// peak (reserved) as run and with each technique the step does not use yet, one change at
// a time, then what --memory-budget would choose for a device of `capacity` bytes (0: not
// known, not simulated).
//   "Predicted step peak (reserved, ember plan): as run 98.00 MiB; --precision fp16: ~52.10 MiB;
//    --checkpoint sqrt: ~41.00 MiB; --accum 2: ~60.00 MiB; --accum 4: ~33.00 MiB. With this
//    device's 64MiB, --memory-budget 64MiB would run fp32, checkpoint sqrt, accum 1 (micro-batch
//    64) at ~41.00 MiB."
std::string out_of_memory_advice(const WorkloadSpec& spec, int threads, size_t capacity);

}  // namespace ember::apps
