#pragma once
// The memory techniques that make a training step fit a budget, chosen from predictions
// (train/plan/step_plan.h) at the least expected slowdown. The effective batch, and so what
// training computes, stays the one asked for: only how the step is run changes.
//
//   ember::train::BudgetFit fit = ember::train::fit_memory_budget(workload, /*threads=*/2, 64 << 20);
//   if (fit.chosen) workload.trainer = fit.chosen->trainer;   // e.g. fp32, checkpoint sqrt, accum 4
//
// The slowdown model (relative to fp32, no checkpointing, one micro-batch):
//   checkpoint sqrt  x 4/3: recompute is about one extra forward of the checkpointed part,
//                    and a forward is about a third of a step (backward ~ two forwards);
//   accum k          x (1 + 0.05 (k - 1)): each extra micro-batch costs launch and
//                    per-call overhead; small batches also use threads and caches less well;
//   fp16             x 2.5 on the CPU (storage only: every op widens, docs/memory.md part 2),
//                    x 1 on a GPU (half the bytes moved; tensor cores not assumed);
//   zero k           x (1 + 0.02 k), a data-parallel job only (Workload::ranks > 1): ZeRO 1
//                    adds an all-gather of the parameters to each step, ZeRO 2 reduce-scatters
//                    every micro-batch; cheap beside recompute on a fast interconnect
//                    (docs/distributed.md's scaling model), and tried before it.
// The candidates are tried cheapest first; the first whose simulated step fits wins.
// The step is simulated under the budget itself, so the allocator makes the choices the
// real run will (which segments to reserve, when to free the cache), and its reserved peak
// must leave an eighth of the budget free (budget_headroom): a real run allocates in an
// order the simulation cannot see (the loader thread prepares batches while the step runs,
// the epoch's last batch is smaller, evaluation follows). On bench/budget_sweep.sh's 80
// runs, choosing right up to the budget left two of them out of memory and measured up to
// 6 MiB above the prediction.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "train/plan/step_plan.h"
#include "train/plan/workload.h"

namespace ember::train {

struct BudgetCandidate {
  TrainerOptions trainer;  // the workload's, with this precision, checkpoint and accum
  double slowdown = 1.0;   // the model above
  StepPrediction prediction;
  bool tried = false;      // simulated (candidates after the chosen one are not)
};

struct BudgetFit {
  size_t budget = 0;                        // bytes
  std::vector<BudgetCandidate> candidates;  // in the order tried
  std::optional<BudgetCandidate> chosen;    // none fits: see smallest
  BudgetCandidate smallest;                 // the candidate with the smallest peak (simulated without a limit)
};

double modelled_slowdown(const TrainerOptions& trainer, Device device);
// What a candidate's simulated step must leave free of the budget: an eighth.
size_t budget_headroom(size_t budget);
// The smallest budget that leaves `reserved` bytes once its headroom is kept free.
size_t smallest_budget_for(size_t reserved);
// Micro-batches below this are not tried: they starve every kernel, and batch norm needs > 1.
inline constexpr int64_t kMinMicroBatch = 4;
// Every combination of precision, checkpoint (none, sqrt), accum (the divisors of the batch
// that leave micro-batches of at least kMinMicroBatch) and, with several ranks, ZeRO stage
// (0, 1, 2), cheapest first; the workload's own techniques are ignored, the rest of its
// TrainerOptions (loss, scaler, data-parallel group) kept.
std::vector<BudgetCandidate> budget_candidates(const Workload& workload);
// Simulates the candidates under a device of `budget` bytes until one fits.
BudgetFit fit_memory_budget(const Workload& workload, int threads, size_t budget);

// After an out-of-memory: the step as run and with each technique it does not use yet, one
// change at a time (the next ZeRO stage, with several ranks; fp16; checkpoint sqrt; up to two
// larger accums), each simulated without a limit. A setting the model cannot take is left out.
struct TechniqueChange {
  TrainerOptions trainer;
  StepPrediction prediction;
};
std::vector<TechniqueChange> technique_changes(const Workload& workload, int threads);

}  // namespace ember::train
