#include "apps/bench_train_command.h"

#include <omp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <optional>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/bench_workload.h"
#include "apps/memory_budget.h"
#include "apps/thread_count.h"
#include "core/cuda_runtime.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/providers.h"
#include "memory/scopes.h"
#include "memory/memory.h"
#include "models/zoo.h"
#include "train/trainer.h"

namespace ember::apps {

CLI::App* add_bench_train_command(CLI::App& app, BenchTrainOptions& o) {
  CLI::App* cmd = app.add_subcommand("bench-train", "Training images/s and peak memory on synthetic 28x28 batches");
  cmd->add_option("--model", o.model, "lenet5 | convnet (any zoo model)")
      ->check(one_of(models::model_names()))
      ->capture_default_str();
  cmd->add_option("--batch", o.batch, "Batch size (the effective batch under --accum)")
      ->check(positive_integer())
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "CPU threads")->check(thread_count())->capture_default_str();
  cmd->add_option("--steps", o.steps, "Timed steps")->check(positive_integer())->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "Untimed steps first")->check(non_negative_integer())->capture_default_str();
  cmd->add_option("--optimizer", o.optimizer, "sgd (momentum 0.9) | adam | adamw")
      ->check(one_of({"sgd", "adam", "adamw"}))
      ->capture_default_str();
  cmd->add_option("--device", o.device, "cpu | cuda | cuda:N")->capture_default_str();
  add_technique_options(cmd, o.technique);
  cmd->add_option("--memory-budget", o.memory_budget,
                  "Choose --precision, --checkpoint and --accum so the step fits this many bytes (e.g. 64MiB), "
                  "the batch pool included, at the least modelled slowdown");
  add_memory_options(cmd, o.memory);
  cmd->add_flag("--json", o.json, "Print one JSON line instead of the table");
  return cmd;
}

nlohmann::ordered_json bench_train_command(const BenchTrainOptions& o, std::ostream& out) {
  using Clock = std::chrono::steady_clock;
  omp_set_num_threads(o.threads);
  const Device device(o.device);
  if (device.is_cuda()) cuda::check_device(device, "bench-train");
  trainer_options(o.technique, o.batch);  // checks the flags before the memory session opens its files
  WorkloadSpec spec{o.model, o.batch, o.optimizer, o.technique, device};
  std::optional<BudgetFit> budget_fit;
  if (!o.memory_budget.empty()) {
    budget_fit = fit_budget_flag(o.memory_budget, spec, o.threads);
    spec.technique = budget_fit->chosen->technique;
  }
  MemorySession memory_session(o.memory, device,
                               "bench-train " + o.model + ", batch " + std::to_string(o.batch) + ", " +
                                   describe(spec.technique, o.batch));
  BenchWorkload workload = make_bench_workload(spec);
  workload.trainer->set_out_of_memory_advice([spec, threads = o.threads](int64_t /*micro_batch*/) {
    return out_of_memory_advice(spec, threads, allocator_for(spec.device).backend().capacity());
  });
  const train::TrainerOptions& trainer_opts = workload.trainer->options();
  train::Trainer& trainer = *workload.trainer;
  int64_t step_index = 0;
  auto step = [&](int i) {
    memory_session.begin_step(step_index++);
    workload.step(static_cast<size_t>(i));
  };
  for (int i = 0; i < o.warmup; ++i) step(i);
  cuda::synchronize();
  reset_peak_stats(device);
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < o.steps; ++i) step(i);
  cuda::synchronize();  // GPU work is asynchronous: time it to its end
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const double rate = static_cast<double>(o.batch) * o.steps / seconds;
  const MemoryStats stats = memory_stats(device);
  nlohmann::ordered_json by_category;
  for (int c = 0; c < kNumMemoryCategories; ++c)
    by_category[category_name(static_cast<MemoryCategory>(c))] = stats.by_category[static_cast<size_t>(c)].peak;
  nlohmann::ordered_json result{
      {"peer", "ember"},
      {"model", o.model},
      {"batch", o.batch},
      {"threads", o.threads},
      {"device", device.str()},
      {"cpu_isa", kernels::cpu::cpu_isa_name(kernels::cpu::cpu_isa())},
      {"cpu_conv", kernels::cpu_conv_algorithm_name(kernels::cpu_conv_algorithm())},
      {"images_per_s", std::round(rate * 10.0) / 10.0},
      {"ms_per_step", std::round(seconds / o.steps * 1e5) / 100.0},
      {"optimizer", o.optimizer},
      {"precision", train::precision_name(trainer_opts.precision)},
      {"checkpoint", trainer_opts.checkpoint.str()},
      {"checkpoint_segments", trainer.checkpoint_segments()},
      {"accum", trainer_opts.accum},
      {"peak_bytes", stats.allocated_bytes.peak},
      {"peak_reserved_bytes", stats.reserved_bytes.peak},
      {"peak_bytes_by_category", by_category}};
  memory_session.finish(result);
  if (budget_fit) {
    result["memory_budget_bytes"] = budget_fit->budget;
    result["predicted_peak_bytes"] = budget_fit->chosen->prediction.peak_bytes;
    result["predicted_peak_reserved_bytes"] = budget_fit->chosen->prediction.peak_reserved_bytes;
    result["modelled_slowdown"] = budget_fit->chosen->slowdown;
  }
  if (o.json) {
    out << result.dump() << "\n";
    return result;
  }
  out << "ember bench-train: " << o.model << ", batch " << o.batch << ", " << device.str();
  if (device.is_cpu())
    out << " (" << kernels::cpu::cpu_isa_name(kernels::cpu::cpu_isa()) << ", EMBER_CPU_CONV="
        << kernels::cpu_conv_algorithm_name(kernels::cpu_conv_algorithm()) << ")";
  out << ", " << o.threads
      << " threads, " << train::precision_name(trainer_opts.precision) << ", checkpoint "
      << trainer_opts.checkpoint.str();
  if (trainer.checkpoint_segments() > 0) out << " (" << trainer.checkpoint_segments() << " segments)";
  out << ", accum " << trainer_opts.accum << "; " << o.steps << " timed steps after " << o.warmup << "\n";
  if (budget_fit) out << "  " << chosen_line(*budget_fit, o.batch) << "\n";
  out
      << "  speed            " << result["ms_per_step"].get<double>() << " ms/step, " << result["images_per_s"].get<double>()
      << " images/s\n"
      << "  peak             " << format_bytes(stats.allocated_bytes.peak) << " allocated, "
      << format_bytes(stats.reserved_bytes.peak) << " reserved\n";
  for (int c = 0; c < kNumMemoryCategories; ++c) {
    const int64_t peak = stats.by_category[static_cast<size_t>(c)].peak;
    if (peak == 0) continue;
    std::string name = category_name(static_cast<MemoryCategory>(c));
    name.resize(16, ' ');
    out << "  " << name << " " << format_bytes(peak) << " peak\n";
  }
  return result;
}

}  // namespace ember::apps
