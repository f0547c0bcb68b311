#include "apps/plan_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <optional>

#include "apps/cli_checks.h"
#include "apps/memory_budget.h"
#include "apps/zoo_workload.h"
#include "kernels/providers.h"
#include "memory/byte_size.h"
#include "memory/stats.h"
#include "train/trainer.h"

namespace ember::apps {

CLI::App* add_plan_command(CLI::App& app, PlanOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "Predict a training step's peak memory by category, before running it (the bench-train workload)");
  add_run_flags(cmd, o.run, RunFlagUse::plan);
  cmd->add_option("--ranks", o.ranks,
                  "Plan one rank of a data-parallel job of N processes (mpirun -np N ember train; --batch per rank)")
      ->check(integer_between(1, 1 << 20, "a number of processes"))
      ->capture_default_str();
  return cmd;
}

namespace {

// The candidates --memory-budget simulated, and what each came to.
void print_budget_fit(const train::BudgetFit& fit, int64_t batch, std::ostream& out) {
  out << "ember plan --memory-budget " << format_bytes(static_cast<int64_t>(fit.budget)) << ": tried, cheapest first\n"
      << "  slowdown  settings                                          peak (reserved)\n";
  for (const train::BudgetCandidate& c : fit.candidates) {
    if (!c.tried) break;
    std::string settings = describe(c.trainer, batch);
    settings.resize(48, ' ');
    out << "  " << std::fixed << std::setprecision(2) << c.slowdown << "x     " << settings << "  "
        << (c.prediction.fits ? format_bytes(c.prediction.peak_bytes) + " (" +
                                    format_bytes(c.prediction.peak_reserved_bytes) + ")  fits"
                              : std::string("does not fit"))
        << "\n";
  }
  out << std::defaultfloat << "\n";
}

}  // namespace

nlohmann::ordered_json plan_command(const PlanOptions& options, std::ostream& out) {
  const RunFlags& o = options.run;
  const Device device(o.device);
  train::Workload spec = zoo_workload(o.model, o.batch, o.optimizer, checked_techniques(o), device);
  spec.ranks = options.ranks;
  const std::optional<train::BudgetFit> fit = fit_run_budget(o, spec, o.threads);
  if (fit && !o.json) print_budget_fit(*fit, o.batch, out);
  const train::TrainerOptions& trainer_opts = spec.trainer;
  const train::StepPrediction p = fit ? fit->chosen->prediction : train::plan_step(spec, o.threads);
  nlohmann::ordered_json by_category, at_peak;
  for (int c = 0; c < kNumMemoryCategories; ++c) {
    const char* name = category_name(static_cast<MemoryCategory>(c));
    by_category[name] = p.peak_by_category[static_cast<size_t>(c)];
    at_peak[name] = p.at_peak_by_category[static_cast<size_t>(c)];
  }
  nlohmann::ordered_json result{{"model", o.model},
                                      {"batch", o.batch},
                                      {"threads", o.threads},
                                      {"device", device.str()},
                                      {"optimizer", o.optimizer},
                                      {"precision", train::precision_name(trainer_opts.precision)},
                                      {"checkpoint", trainer_opts.checkpoint.str()},
                                      {"checkpoint_segments", p.checkpoint_segments},
                                      {"accum", trainer_opts.accum},
                                      {"ranks", options.ranks},
                                      {"zero", trainer_opts.data_parallel.zero},
                                      {"peak_bytes", p.peak_bytes},
                                      {"peak_reserved_bytes", p.peak_reserved_bytes},
                                      {"peak_op", p.peak_op},
                                      {"peak_phase", phase_name(p.peak_phase)},
                                      {"peak_bytes_by_category", by_category},
                                      {"at_peak_bytes_by_category", at_peak},
                                      {"simulate_ms", std::round(p.simulate_ms * 10.0) / 10.0}};
  if (fit) {
    result["memory_budget_bytes"] = fit->budget;
    result["modelled_slowdown"] = fit->chosen->slowdown;
    result["candidates_simulated"] = std::count_if(fit->candidates.begin(), fit->candidates.end(),
                                                   [](const train::BudgetCandidate& c) { return c.tried; });
  }
  if (o.json) {
    out << result.dump() << "\n";
    return result;
  }
  out << "ember plan: " << o.model << ", batch " << o.batch << ", " << device.str() << ", " << o.threads
      << " threads, " << o.optimizer << ", " << train::precision_name(trainer_opts.precision) << ", checkpoint "
      << trainer_opts.checkpoint.str();
  if (p.checkpoint_segments > 0) out << " (" << p.checkpoint_segments << " segments)";
  out << ", accum " << trainer_opts.accum;
  if (options.ranks > 1 || trainer_opts.data_parallel.zero > 0)
    out << ", rank 0 of " << options.ranks << " zero " << trainer_opts.data_parallel.zero;
  out << "\n"
      << "  predicted peak   " << format_bytes(p.peak_bytes) << " allocated, " << format_bytes(p.peak_reserved_bytes)
      << " reserved (simulated in " << std::round(p.simulate_ms * 10.0) / 10.0 << " ms, no math run)\n"
      << "  at the peak      " << phase_name(p.peak_phase) << ", allocating for " << (p.peak_op.empty() ? "?" : p.peak_op)
      << "\n\n"
      << "  category          own peak   at the step's peak\n";
  for (int c = 0; c < kNumMemoryCategories; ++c) {
    const size_t i = static_cast<size_t>(c);
    if (p.peak_by_category[i] == 0) continue;
    std::string name = category_name(static_cast<MemoryCategory>(c));
    name.resize(16, ' ');
    std::string own = format_bytes(p.peak_by_category[i]), now = format_bytes(p.at_peak_by_category[i]);
    out << "  " << name << " " << std::string(own.size() < 10 ? 10 - own.size() : 0, ' ') << own << "   "
        << std::string(now.size() < 10 ? 10 - now.size() : 0, ' ') << now << "\n";
  }
  if (device.is_cuda() && kernels::conv_provider() == kernels::ConvProvider::cudnn)
    out << "  (CUDA: cuDNN's workspace, EMBER_CONV=cudnn, is chosen on the device and not simulated)\n";
  return result;
}

}  // namespace ember::apps
