#include "apps/memory_budget.h"

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

#include "memory/byte_size.h"
#include "memory/stats.h"

namespace ember::apps {

namespace {
// Micro-batches below this are not tried: they starve every kernel, and batch norm needs > 1.
constexpr int64_t kMinMicroBatch = 4;
constexpr int64_t kHeadroomShare = 8;  // the budget kept free: 1/8 (memory_budget.h says why)

// A size as a --memory-budget value parse_byte_size reads back ("64MiB", "1536KiB", "1000").
std::string byte_size_flag(size_t bytes) {
  if (bytes % (size_t{1} << 30) == 0) return std::to_string(bytes >> 30) + "GiB";
  if (bytes % (size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes % (size_t{1} << 10) == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes);
}
}  // namespace

void check_budget_chooses_techniques(const TechniqueOptions& t) {
  const TechniqueOptions defaults;
  EMBER_CHECK(t.precision == defaults.precision && t.checkpoint == defaults.checkpoint && t.accum == defaults.accum,
              "--memory-budget chooses --precision, --checkpoint and --accum itself; leave them out");
}

size_t budget_headroom(size_t budget) { return budget / kHeadroomShare; }

double modelled_slowdown(const TechniqueOptions& t, Device device) {
  double s = 1.0;
  if (t.checkpoint != "none") s *= 4.0 / 3.0;
  s *= 1.0 + 0.05 * static_cast<double>(t.accum - 1);
  if (t.precision == "fp16" && device.is_cpu()) s *= 2.5;
  return s;
}

std::vector<BudgetCandidate> budget_candidates(const WorkloadSpec& spec) {
  std::vector<BudgetCandidate> out;
  for (const char* precision : {"fp32", "fp16"})
    for (const char* checkpoint : {"none", "sqrt"})
      for (int64_t accum = 1; accum <= spec.batch / kMinMicroBatch || accum == 1; ++accum) {
        if (spec.batch % accum != 0) continue;
        BudgetCandidate c;
        c.technique = {precision, checkpoint, accum};
        c.slowdown = modelled_slowdown(c.technique, spec.device);
        out.push_back(c);
      }
  // Cheapest first; at equal cost the one with fewer micro-batches (the larger GEMMs).
  std::stable_sort(out.begin(), out.end(), [](const BudgetCandidate& a, const BudgetCandidate& b) {
    return a.slowdown < b.slowdown;
  });
  return out;
}

BudgetFit fit_memory_budget(const WorkloadSpec& spec, int threads, size_t budget) {
  BudgetFit fit;
  fit.budget = budget;
  fit.candidates = budget_candidates(spec);
  for (BudgetCandidate& c : fit.candidates) {
    WorkloadSpec s = spec;
    s.technique = c.technique;
    c.tried = true;
    try {
      // Simulated under the budget itself, so the allocator makes the real run's choices
      // (which segments to reserve, when to free the cache); the headroom is asked of the result.
      c.prediction = predict_step(s, threads, budget);
    } catch (const Error& e) {  // a setting this model cannot take (batch norm over a micro-batch of 1...)
      c.prediction.fits = false;
      c.prediction.out_of_memory = e.what();
      continue;
    }
    if (c.prediction.fits && c.prediction.peak_reserved_bytes + budget_headroom(budget) > budget) {
      c.prediction.fits = false;
      c.prediction.out_of_memory = "reserves " + format_bytes(static_cast<int64_t>(c.prediction.peak_reserved_bytes)) +
                                   ", more than the budget less its eighth of headroom";
    }
    if (c.prediction.fits) {
      fit.chosen = c;
      break;
    }
  }
  if (!fit.chosen) {
    // The smallest peak possible: for each precision and checkpoint, the smallest micro-batch,
    // simulated without a limit (fp16 + sqrt is usually the winner, but a model may disagree).
    bool first = true;
    for (const char* precision : {"fp32", "fp16"})
      for (const char* checkpoint : {"none", "sqrt"}) {
        BudgetCandidate c;
        for (const BudgetCandidate& k : fit.candidates)
          if (k.technique.precision == precision && k.technique.checkpoint == checkpoint &&
              k.technique.accum > c.technique.accum)
            c = k;
        WorkloadSpec s = spec;
        s.technique = c.technique;
        try {
          c.prediction = predict_step(s, threads, 0);
        } catch (const Error&) {
          continue;
        }
        if (first || c.prediction.peak_reserved_bytes < fit.smallest.prediction.peak_reserved_bytes) fit.smallest = c;
        first = false;
      }
  }
  return fit;
}

std::string describe(const TechniqueOptions& t, int64_t batch) {
  std::ostringstream os;
  os << t.precision << ", checkpoint " << t.checkpoint << ", accum " << t.accum << " (micro-batch "
     << batch / t.accum << ")";
  return os.str();
}

BudgetFit fit_budget_flag(const std::string& text, const WorkloadSpec& spec, int threads) {
  check_budget_chooses_techniques(spec.technique);
  BudgetFit fit = fit_memory_budget(spec, threads, parse_byte_size(text, "--memory-budget"));
  if (!fit.chosen) throw Error(nothing_fits_message(fit, spec));
  return fit;
}

std::string chosen_line(const BudgetFit& fit, int64_t batch) {
  EMBER_CHECK(fit.chosen, "chosen_line: nothing fits " << format_bytes(static_cast<int64_t>(fit.budget)));
  const BudgetCandidate& c = *fit.chosen;
  std::ostringstream os;
  os << "memory budget " << format_bytes(static_cast<int64_t>(fit.budget)) << ": " << describe(c.technique, batch)
     << ", predicted step peak " << format_bytes(c.prediction.peak_bytes) << " allocated, "
     << format_bytes(c.prediction.peak_reserved_bytes) << " reserved, modelled slowdown " << c.slowdown << "x";
  return os.str();
}

std::string nothing_fits_message(const BudgetFit& fit, const WorkloadSpec& spec) {
  std::ostringstream os;
  os << "--memory-budget " << format_bytes(static_cast<int64_t>(fit.budget)) << ": no combination of --precision, "
     << "--checkpoint and --accum fits " << spec.model << " at batch " << spec.batch << " (" << fit.candidates.size()
     << " simulated). The smallest peak possible is " << format_bytes(fit.smallest.prediction.peak_bytes)
     << " allocated, " << format_bytes(fit.smallest.prediction.peak_reserved_bytes) << " reserved, with "
     << describe(fit.smallest.technique, spec.batch) << ": raise the budget to at least "
     << format_bytes(fit.smallest.prediction.peak_reserved_bytes * kHeadroomShare / (kHeadroomShare - 1) + 1)
     << " (that and the eighth kept free), or use a smaller model.";
  return os.str();
}

std::string out_of_memory_advice(const WorkloadSpec& spec, int threads, size_t capacity) {
  const TechniqueOptions& t = spec.technique;
  std::vector<std::pair<std::string, TechniqueOptions>> changes{{"as run", t}};
  if (t.precision == "fp32") changes.push_back({"--precision fp16", {"fp16", t.checkpoint, t.accum}});
  if (t.checkpoint == "none") changes.push_back({"--checkpoint sqrt", {t.precision, "sqrt", t.accum}});
  int accum_changes = 0;
  for (int64_t accum = t.accum * 2; accum_changes < 2 && spec.batch / accum >= kMinMicroBatch; accum *= 2)
    if (spec.batch % accum == 0) {
      changes.push_back({"--accum " + std::to_string(accum), {t.precision, t.checkpoint, accum}});
      ++accum_changes;
    }
  std::ostringstream os;
  os << "Predicted step peak (reserved, ember plan):";
  const char* separator = " ";
  for (const auto& [flag, technique] : changes) {
    WorkloadSpec s = spec;
    s.technique = technique;
    try {
      const StepPrediction p = predict_step(s, threads);
      os << separator << flag << (flag == "as run" ? " " : ": ~") << format_bytes(p.peak_reserved_bytes);
    } catch (const Error&) {  // a setting this model cannot take
      continue;
    }
    separator = "; ";
  }
  os << ".";
  if (capacity == 0) {
    os << " --memory-budget chooses them together for a budget you name.";
    return os.str();
  }
  const BudgetFit fit = fit_memory_budget(spec, threads, capacity);
  const std::string budget = byte_size_flag(capacity);
  os << " With this device's " << budget << ", ";
  if (fit.chosen)
    os << "--memory-budget " << budget << " (in place of --precision, --checkpoint and --accum) would run "
       << describe(fit.chosen->technique, spec.batch) << " at ~" << format_bytes(fit.chosen->prediction.peak_reserved_bytes)
       << ".";
  else
    os << "no setting fits: the smallest peak possible is " << format_bytes(fit.smallest.prediction.peak_reserved_bytes)
       << " reserved, with " << describe(fit.smallest.technique, spec.batch) << "; use a smaller batch or model.";
  return os.str();
}

}  // namespace ember::apps
