#include "apps/plan_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <optional>

#include "apps/cli_checks.h"
#include "apps/memory_budget.h"
#include "apps/step_planner.h"
#include "memory/byte_size.h"
#include "memory/stats.h"
#include "models/zoo.h"
#include "train/trainer.h"

namespace ember::apps {

CLI::App* add_plan_command(CLI::App& app, PlanOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "Predict a training step's peak memory by category, before running it (the bench-train workload)");
  cmd->add_option("--model", o.model, "Any zoo model")->check(one_of(models::model_names()))->capture_default_str();
  cmd->add_option("--batch", o.batch, "Batch size (the effective batch under --accum)")
      ->check(positive_integer())
      ->capture_default_str();
  // Not thread_count(): a plan runs no step here, and may be for a machine with more cores.
  cmd->add_option("--threads", o.threads, "CPU threads the step would run with")
      ->check(positive_integer())
      ->capture_default_str();
  cmd->add_option("--optimizer", o.optimizer, "sgd (momentum 0.9) | adam | adamw")
      ->check(one_of({"sgd", "adam", "adamw"}))
      ->capture_default_str();
  cmd->add_option("--device", o.device, "cpu | cuda | cuda:N (no GPU needed to plan for one)")->capture_default_str();
  add_technique_options(cmd, o.technique);
  cmd->add_option("--memory-budget", o.memory_budget,
                  "Choose --precision, --checkpoint and --accum so the step fits this many bytes (e.g. 64MiB), "
                  "at the least modelled slowdown");
  cmd->add_flag("--json", o.json, "Print one JSON line instead of the table");
  return cmd;
}

namespace {

// The candidates --memory-budget simulated, and what each came to.
void print_budget_fit(const BudgetFit& fit, int64_t batch, std::ostream& out) {
  out << "ember plan --memory-budget " << format_bytes(static_cast<int64_t>(fit.budget)) << ": tried, cheapest first\n"
      << "  slowdown  settings                                          peak (reserved)\n";
  for (const BudgetCandidate& c : fit.candidates) {
    if (!c.tried) break;
    std::string settings = describe(c.technique, batch);
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

nlohmann::ordered_json plan_command(const PlanOptions& o, std::ostream& out) {
  const Device device(o.device);
  WorkloadSpec spec{o.model, o.batch, o.optimizer, o.technique, device};
  std::optional<BudgetFit> fit;
  if (!o.memory_budget.empty()) {
    fit = fit_budget_flag(o.memory_budget, spec, o.threads);
    spec.technique = fit->chosen->technique;
    if (!o.json) print_budget_fit(*fit, o.batch, out);
  }
  const train::TrainerOptions trainer_opts = trainer_options(spec.technique, o.batch);
  const StepPrediction p = fit ? fit->chosen->prediction : predict_step(spec, o.threads);
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
                                                   [](const BudgetCandidate& c) { return c.tried; });
  }
  if (o.json) {
    out << result.dump() << "\n";
    return result;
  }
  out << "ember plan: " << o.model << ", batch " << o.batch << ", " << device.str() << ", " << o.threads
      << " threads, " << o.optimizer << ", " << train::precision_name(trainer_opts.precision) << ", checkpoint "
      << trainer_opts.checkpoint.str();
  if (p.checkpoint_segments > 0) out << " (" << p.checkpoint_segments << " segments)";
  out << ", accum " << trainer_opts.accum << "\n"
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
  if (device.is_cuda())
    out << "  (CUDA: the backends' own scratch, such as the convolution workspace, is not simulated)\n";
  return result;
}

}  // namespace ember::apps
