#include "train/plan/budget_fit.h"

#include <algorithm>

#include "core/error.h"
#include "memory/stats.h"

namespace ember::train {

namespace {

constexpr size_t kHeadroomShare = 8;  // the budget kept free: 1/8 (budget_fit.h says why)

TrainerOptions with_techniques(TrainerOptions t, Precision precision, CheckpointPolicy checkpoint, int64_t accum,
                               int zero) {
  t.precision = precision;
  t.checkpoint = checkpoint;
  t.accum = accum;
  t.data_parallel.zero = zero;
  return t;
}

// The ZeRO stages a workload may use: sharding needs ranks to shard over.
std::vector<int> zero_stages(const Workload& w) {
  return w.ranks > 1 ? std::vector<int>{0, 1, 2} : std::vector<int>{w.trainer.data_parallel.zero};
}

bool same_techniques(const TrainerOptions& a, Precision precision, CheckpointPolicy::Kind checkpoint) {
  return a.precision == precision && a.checkpoint.kind == checkpoint;
}

StepPrediction predicted(Workload w, const TrainerOptions& trainer, int threads, size_t capacity) {
  w.trainer = trainer;
  return plan_step(w, threads, capacity);
}

}  // namespace

size_t budget_headroom(size_t budget) { return budget / kHeadroomShare; }

size_t smallest_budget_for(size_t reserved) { return reserved * kHeadroomShare / (kHeadroomShare - 1) + 1; }

double modelled_slowdown(const TrainerOptions& t, Device device) {
  double s = 1.0;
  if (t.checkpoint.enabled()) s *= 4.0 / 3.0;
  s *= 1.0 + 0.05 * static_cast<double>(t.accum - 1);
  if (t.precision == Precision::fp16 && device.is_cpu()) s *= 2.5;
  s *= 1.0 + 0.02 * static_cast<double>(t.data_parallel.zero);
  return s;
}

std::vector<BudgetCandidate> budget_candidates(const Workload& w) {
  std::vector<BudgetCandidate> out;
  for (int zero : zero_stages(w))
    for (Precision precision : {Precision::fp32, Precision::fp16})
      for (CheckpointPolicy checkpoint : {CheckpointPolicy::none(), CheckpointPolicy::sqrt()})
        for (int64_t accum = 1; accum <= w.batch / kMinMicroBatch || accum == 1; ++accum) {
          if (w.batch % accum != 0) continue;
          BudgetCandidate c;
          c.trainer = with_techniques(w.trainer, precision, checkpoint, accum, zero);
          c.slowdown = modelled_slowdown(c.trainer, w.device);
          out.push_back(c);
        }
  // Cheapest first; at equal cost the one with fewer micro-batches (the larger GEMMs).
  std::stable_sort(out.begin(), out.end(), [](const BudgetCandidate& a, const BudgetCandidate& b) {
    return a.slowdown < b.slowdown;
  });
  return out;
}

BudgetFit fit_memory_budget(const Workload& w, int threads, size_t budget) {
  BudgetFit fit;
  fit.budget = budget;
  fit.candidates = budget_candidates(w);
  for (BudgetCandidate& c : fit.candidates) {
    c.tried = true;
    try {
      // Simulated under the budget itself, so the allocator makes the real run's choices
      // (which segments to reserve, when to free the cache); the headroom is asked of the result.
      c.prediction = predicted(w, c.trainer, threads, budget);
    } catch (const Error& e) {  // a setting this model cannot take (batch norm over a micro-batch of 1...)
      c.prediction.fits = false;
      c.prediction.out_of_memory = e.what();
      continue;
    }
    if (c.prediction.fits && static_cast<size_t>(c.prediction.peak_reserved_bytes) + budget_headroom(budget) > budget) {
      c.prediction.fits = false;
      c.prediction.out_of_memory = "reserves " + format_bytes(c.prediction.peak_reserved_bytes) +
                                   ", more than the budget less its eighth of headroom";
    }
    if (c.prediction.fits) {
      fit.chosen = c;
      break;
    }
  }
  if (fit.chosen) return fit;
  // The smallest peak possible: for each precision and checkpoint, the smallest micro-batch at
  // the most sharding, simulated without a limit (fp16 + sqrt is usually the winner, but a
  // model may disagree).
  bool first = true;
  const int most_sharding = zero_stages(w).back();
  for (Precision precision : {Precision::fp32, Precision::fp16})
    for (CheckpointPolicy::Kind checkpoint : {CheckpointPolicy::Kind::none, CheckpointPolicy::Kind::sqrt}) {
      BudgetCandidate c;
      c.trainer.accum = 0;
      for (const BudgetCandidate& k : fit.candidates)
        if (same_techniques(k.trainer, precision, checkpoint) && k.trainer.data_parallel.zero == most_sharding &&
            k.trainer.accum > c.trainer.accum)
          c = k;
      if (c.trainer.accum == 0) continue;
      try {
        c.prediction = predicted(w, c.trainer, threads, 0);
      } catch (const Error&) {
        continue;
      }
      if (first || c.prediction.peak_reserved_bytes < fit.smallest.prediction.peak_reserved_bytes) fit.smallest = c;
      first = false;
    }
  return fit;
}

std::vector<TechniqueChange> technique_changes(const Workload& w, int threads) {
  const TrainerOptions& t = w.trainer;
  std::vector<TrainerOptions> changes{t};
  const int zero = t.data_parallel.zero;
  if (w.ranks > 1 && zero < 2) changes.push_back(with_techniques(t, t.precision, t.checkpoint, t.accum, zero + 1));
  if (t.precision == Precision::fp32)
    changes.push_back(with_techniques(t, Precision::fp16, t.checkpoint, t.accum, zero));
  if (!t.checkpoint.enabled())
    changes.push_back(with_techniques(t, t.precision, CheckpointPolicy::sqrt(), t.accum, zero));
  int accum_changes = 0;
  for (int64_t accum = t.accum * 2; accum_changes < 2 && w.batch / accum >= kMinMicroBatch; accum *= 2)
    if (w.batch % accum == 0) {
      changes.push_back(with_techniques(t, t.precision, t.checkpoint, accum, zero));
      ++accum_changes;
    }
  std::vector<TechniqueChange> out;
  for (const TrainerOptions& change : changes) {
    try {
      out.push_back({change, predicted(w, change, threads, 0)});
    } catch (const Error&) {  // a setting this model cannot take
    }
  }
  return out;
}

}  // namespace ember::train
