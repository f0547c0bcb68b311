#include "apps/memory_budget.h"

#include <sstream>
#include <utility>
#include <vector>

#include "memory/byte_size.h"
#include "memory/memory.h"

namespace ember::apps {

namespace {

// A size as a --memory-budget value parse_byte_size reads back ("64MiB", "1536KiB", "1000").
std::string byte_size_flag(size_t bytes) {
  if (bytes % (size_t{1} << 30) == 0) return std::to_string(bytes >> 30) + "GiB";
  if (bytes % (size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes % (size_t{1} << 10) == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes);
}

// The flag that changes `as_run` into `change` ("as run" when nothing does).
std::string change_flag(const train::TrainerOptions& as_run, const train::TrainerOptions& change) {
  if (change.precision != as_run.precision) return std::string("--precision ") + train::precision_name(change.precision);
  if (change.checkpoint.kind != as_run.checkpoint.kind) return "--checkpoint " + change.checkpoint.str();
  if (change.accum != as_run.accum) return "--accum " + std::to_string(change.accum);
  if (change.data_parallel.zero != as_run.data_parallel.zero) return "--zero " + std::to_string(change.data_parallel.zero);
  return "as run";
}

}  // namespace

void check_budget_chooses_techniques(const TechniqueOptions& t) {
  const TechniqueOptions defaults;
  EMBER_CHECK(t.precision == defaults.precision && t.checkpoint == defaults.checkpoint && t.accum == defaults.accum &&
                  t.zero == defaults.zero,
              "--memory-budget chooses --precision, --checkpoint, --accum and (with several ranks) --zero itself; "
              "leave them out");
}

std::string describe(const train::TrainerOptions& t, int64_t batch) {
  std::ostringstream os;
  os << train::precision_name(t.precision) << ", checkpoint " << t.checkpoint.str() << ", accum " << t.accum
     << " (micro-batch " << batch / t.accum << ")";
  if (t.data_parallel.zero > 0) os << ", zero " << t.data_parallel.zero;
  return os.str();
}

train::BudgetFit fit_budget_flag(const std::string& text, const TechniqueOptions& technique,
                                 const train::Workload& workload, const std::string& model, int threads) {
  check_budget_chooses_techniques(technique);
  train::BudgetFit fit = train::fit_memory_budget(workload, threads, parse_byte_size(text, "--memory-budget"));
  if (!fit.chosen) throw Error(nothing_fits_message(fit, model, workload.batch));
  return fit;
}

std::string chosen_line(const train::BudgetFit& fit, int64_t batch) {
  EMBER_CHECK(fit.chosen, "chosen_line: nothing fits " << format_bytes(static_cast<int64_t>(fit.budget)));
  const train::BudgetCandidate& c = *fit.chosen;
  std::ostringstream os;
  os << "memory budget " << format_bytes(static_cast<int64_t>(fit.budget)) << ": " << describe(c.trainer, batch)
     << ", predicted step peak " << format_bytes(c.prediction.peak_bytes) << " allocated, "
     << format_bytes(c.prediction.peak_reserved_bytes) << " reserved, modelled slowdown " << c.slowdown << "x";
  return os.str();
}

std::string nothing_fits_message(const train::BudgetFit& fit, const std::string& model, int64_t batch) {
  const int64_t smallest = fit.smallest.prediction.peak_reserved_bytes;
  const auto budget_needed = static_cast<int64_t>(train::smallest_budget_for(static_cast<size_t>(smallest)));
  std::ostringstream os;
  os << "--memory-budget " << format_bytes(static_cast<int64_t>(fit.budget)) << ": no combination of --precision, "
     << "--checkpoint and --accum fits " << model << " at batch " << batch << " (" << fit.candidates.size()
     << " simulated). The smallest peak possible is " << format_bytes(fit.smallest.prediction.peak_bytes)
     << " allocated, " << format_bytes(smallest) << " reserved, with " << describe(fit.smallest.trainer, batch)
     << ": raise the budget to at least " << format_bytes(budget_needed)
     << " (that and the eighth kept free), or use a smaller model.";
  return os.str();
}

std::string out_of_memory_advice(const train::Workload& as_run, int threads, size_t capacity) {
  std::ostringstream os;
  os << "Predicted step peak (reserved, ember plan):";
  const char* separator = " ";
  for (const train::TechniqueChange& c : train::technique_changes(as_run, threads)) {
    const std::string flag = change_flag(as_run.trainer, c.trainer);
    os << separator << flag << (flag == "as run" ? " " : ": ~") << format_bytes(c.prediction.peak_reserved_bytes);
    separator = "; ";
  }
  os << ".";
  if (capacity == 0) {
    os << " --memory-budget chooses them together for a budget you name.";
    return os.str();
  }
  const train::BudgetFit fit = train::fit_memory_budget(as_run, threads, capacity);
  const std::string budget = byte_size_flag(capacity);
  os << " With this device's " << budget << ", ";
  if (fit.chosen)
    os << "--memory-budget " << budget << " (in place of --precision, --checkpoint and --accum) would run "
       << describe(fit.chosen->trainer, as_run.batch) << " at ~"
       << format_bytes(fit.chosen->prediction.peak_reserved_bytes) << ".";
  else
    os << "no setting fits: the smallest peak possible is " << format_bytes(fit.smallest.prediction.peak_reserved_bytes)
       << " reserved, with " << describe(fit.smallest.trainer, as_run.batch) << "; use a smaller batch or model.";
  return os.str();
}

void advise_on_out_of_memory(train::Trainer& trainer, const train::Workload& as_run, int threads) {
  trainer.set_out_of_memory_advice([as_run, threads](int64_t /*micro_batch*/) {
    return out_of_memory_advice(as_run, threads, allocator_for(as_run.device).backend().capacity());
  });
}

}  // namespace ember::apps
