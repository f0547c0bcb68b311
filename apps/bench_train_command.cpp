#include "apps/bench_train_command.h"

#include <omp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <optional>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/memory_budget.h"
#include "apps/rank_run.h"
#include "apps/zoo_workload.h"
#include "core/cuda_runtime.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/fp32_peak.h"
#include "kernels/cpu/gemm.h"
#include "kernels/providers.h"
#include "memory/scopes.h"
#include "memory/memory.h"
#include "train/trainer.h"

namespace ember::apps {

CLI::App* add_bench_train_command(CLI::App& app, BenchTrainOptions& o) {
  CLI::App* cmd = app.add_subcommand("bench-train", "Training images/s and peak memory on synthetic 28x28 batches");
  add_run_flags(cmd, o.run, RunFlagUse::bench);
  cmd->add_option("--steps", o.steps, "Timed steps")->check(positive_integer())->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "Untimed steps first")->check(non_negative_integer())->capture_default_str();
  cmd->add_flag("!--no-overlap", o.overlap,
                "Data parallel (mpirun): send the gradient buckets after backward, not during it (what overlap hides)");
  add_memory_options(cmd, o.memory);
  return cmd;
}

nlohmann::ordered_json bench_train_command(const BenchTrainOptions& options, std::ostream& console) {
  using Clock = std::chrono::steady_clock;
  const RunFlags& o = options.run;
  omp_set_num_threads(o.threads);
  const Device device(o.device);
  if (device.is_cuda()) cuda::check_device(device, "bench-train");
  // The flags are checked before the memory session opens its files.
  train::TrainerOptions techniques = checked_techniques(o);
  const RankRun ranks = start_rank_run(techniques.data_parallel.zero);  // mpirun: each rank steps its own batches
  techniques.data_parallel.group = ranks.group;
  techniques.data_parallel.overlap = options.overlap;
  std::ostream& out = ranks.shown(console);
  train::Workload spec = zoo_workload(o.model, o.batch, o.optimizer, techniques, device);
  spec.ranks = ranks.ranks;
  const std::optional<train::BudgetFit> budget_fit = fit_run_budget(o, spec, o.threads);
  MemorySession memory_session(rank_memory_options(options.memory, ranks.rank), device,
                               "bench-train " + o.model + ", batch " + std::to_string(o.batch) + ", " +
                                   describe(spec.trainer, o.batch));
  train::BuiltWorkload workload = train::build_workload(spec);
  advise_on_out_of_memory(*workload.trainer, spec, o.threads);
  const train::TrainerOptions& trainer_opts = workload.trainer->options();
  train::Trainer& trainer = *workload.trainer;
  int64_t step_index = 0;
  auto step = [&](int i) {
    memory_session.begin_step(step_index++);
    workload.step(static_cast<size_t>(i));
  };
  for (int i = 0; i < options.warmup; ++i) step(i);
  cuda::synchronize();
  if (ranks.group) ranks.group->barrier();  // every rank's timed steps start together
  reset_peak_stats(device);
  const int64_t flops_before = kernels::cpu::cpu_product_flops();
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < options.steps; ++i) step(i);
  cuda::synchronize();  // GPU work is asynchronous: time it to its end
  if (ranks.group) ranks.group->barrier();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const double rate = static_cast<double>(o.batch) * ranks.ranks * options.steps / seconds;  // the job's images
  // This process's CPU products (GEMMs and direct convolutions; the flops each algorithm actually
  // does, so Winograd's saving does not count as speed) over the whole step's time, against this
  // CPU's peak measured after the steps on as many threads. Under mpirun: rank 0's.
  const double cpu_gflops = static_cast<double>(kernels::cpu::cpu_product_flops() - flops_before) / seconds * 1e-9;
  const double cpu_peak = device.is_cpu() ? kernels::cpu::measured_fp32_peak_gflops(o.threads) : 0.0;
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
      {"ms_per_step", std::round(seconds / options.steps * 1e5) / 100.0},
      {"optimizer", o.optimizer},
      {"precision", train::precision_name(trainer_opts.precision)},
      {"checkpoint", trainer_opts.checkpoint.str()},
      {"checkpoint_segments", trainer.checkpoint_segments()},
      {"accum", trainer_opts.accum},
      {"ranks", ranks.ranks},
      {"zero", trainer_opts.data_parallel.zero},
      {"overlap", trainer_opts.data_parallel.overlap},
      {"peak_bytes", stats.allocated_bytes.peak},
      {"peak_reserved_bytes", stats.reserved_bytes.peak},
      {"peak_bytes_by_category", by_category}};
  if (device.is_cpu()) {
    result["cpu_gflops"] = std::round(cpu_gflops * 10.0) / 10.0;
    result["cpu_peak_gflops"] = std::round(cpu_peak * 10.0) / 10.0;
  }
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
  out << ", accum " << trainer_opts.accum;
  if (ranks.group)
    out << ", " << ranks.ranks << " ranks zero " << trainer_opts.data_parallel.zero << (options.overlap ? "" : " (no overlap)")
        << " (images/s of the job; peaks of rank 0)";
  out << "; " << options.steps << " timed steps after " << options.warmup << "\n";
  if (budget_fit) out << "  " << chosen_line(*budget_fit, o.batch) << "\n";
  out
      << "  speed            " << result["ms_per_step"].get<double>() << " ms/step, " << result["images_per_s"].get<double>()
      << " images/s\n";
  if (device.is_cpu())
    out << "  compute          " << result["cpu_gflops"].get<double>() << " GFLOP/s in the CPU's products, "
        << std::round(cpu_gflops / cpu_peak * 1000.0) / 10.0 << "% of the fp32 peak measured on " << o.threads
        << " threads (" << result["cpu_peak_gflops"].get<double>() << " GFLOP/s)\n";
  out << "  peak             " << format_bytes(stats.allocated_bytes.peak) << " allocated, "
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
