#include "apps/train_command.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <optional>
#include <vector>

#include <omp.h>

#include <CLI/CLI.hpp>

#include "apps/cli_checks.h"
#include "apps/epoch_report.h"
#include "apps/memory_budget.h"
#include "apps/output_path.h"
#include "apps/rank_run.h"
#include "apps/train_resume.h"
#include "apps/train_setup.h"
#include "autograd/anomaly_mode.h"
#include "core/cuda_runtime.h"
#include "core/generator.h"
#include "data/data_loader.h"
#include "memory/memory.h"
#include "models/recipe.h"
#include "models/zoo.h"
#include "optim/lr_schedule.h"
#include "optim/make_optimizer.h"
#include "train/fit.h"
#include "train/weights_file.h"

namespace ember::apps {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kEvalBatch = 1024;  // the most the accuracy pass takes at once

Device choose_device(const std::string& spec) {
  if (spec.empty()) return cuda::is_available() ? kCUDA : kCPU;
  const Device device(spec);
  if (device.is_cuda()) cuda::check_device(device, "train");
  return device;
}

// What can be checked before anything loads: flags that contradict each other, output paths.
void check_run_options(const TrainOptions& o) {
  EMBER_CHECK(o.resume.empty() || o.load.empty(),
              "ember train: --resume continues a saved run (its weights included) and --load starts a new run from "
              "weights; give one of them");
  EMBER_CHECK(o.save_every == 0 || !o.save.empty(),
              "ember train: --save-every " << o.save_every << " needs --save FILE to say where the checkpoint goes");
  check_writable(o.save, "--save");  // the memory outputs: MemorySession's constructor
}

data::SyntheticOptions synthetic_options(const TrainOptions& o) {
  data::SyntheticOptions s;
  s.samples_per_class = o.samples_per_class;
  s.classes = o.classes;
  s.noise = o.noise;
  s.seed = o.seed;
  return s;
}

// The step this run will make, as train::Workload: the model and optimizer of the run, the data
// sets' tensors allocated first (on the CPU they live under the same limit), and the batches
// the training loader holds at once (its prefetched ones and the one in use).
train::Workload training_workload(const TrainOptions& o, const TrainData& data, Device device,
                                  const train::TrainerOptions& techniques) {
  train::Workload w;
  w.sample = sample_shape(data.train);
  w.classes = data.train.num_classes;
  w.model = [name = o.run.model, sample = w.sample, classes = w.classes] { return models::make_model(name, sample, classes); };
  optim::OptimizerSpec spec{o.run.optimizer, o.lr, o.momentum, o.nesterov, o.weight_decay};
  w.optimizer = [spec](std::vector<Tensor> params) { return optim::make_optimizer(spec, std::move(params)); };
  w.trainer = techniques;
  w.batch = o.run.batch;
  w.device = device;
  w.data_batches = static_cast<int>(loader_options(data, o.run.batch, true, o.seed, device).prefetch_batches()) + 1;
  if (device.is_cpu()) {
    std::vector<const void*> seen;  // synthetic data's test set is its training set
    for (const data::Dataset* d : {&data.train, &data.test})
      for (const Tensor* t : {&d->images, &d->labels}) {
        if (std::find(seen.begin(), seen.end(), t->data_ptr()) != seen.end()) continue;
        seen.push_back(t->data_ptr());
        w.resident_bytes.push_back(static_cast<int64_t>(t->nbytes()));
      }
  }
  return w;
}

train::FitOptions fit_options(const TrainOptions& o, const train::TrainerOptions& techniques, int64_t batches_per_epoch) {
  train::FitOptions f;
  f.epochs = o.epochs;
  f.schedule = optim::make_schedule(o.schedule, o.lr, batches_per_epoch * o.epochs);  // effective steps
  f.save = o.save;
  f.save_every = o.save_every;
  f.resume = o.resume;
  f.identity = run_identity(o, techniques);
  return f;
}

void print_banner(const TrainOptions& o, const nn::Module& model, const data::Dataset& dataset, Device device,
                  const train::Trainer& trainer, const std::optional<train::BudgetFit>& budget_fit, const RankRun& ranks,
                  std::ostream& out) {
  const bool sgd = o.run.optimizer == "sgd";
  out << "ember train: " << model.name() << " (" << model.num_parameters() << " parameters) on " << o.data << " ("
      << dataset.size() << " samples, " << dataset.num_classes << " classes), " << device.str() << ", "
      << o.run.optimizer << " lr " << o.lr << (sgd ? " momentum " : "");
  if (sgd) out << o.momentum;
  out << (sgd && o.nesterov ? " nesterov" : "") << " wd " << o.weight_decay << " (" << o.schedule << "), batch "
      << o.run.batch << (ranks.group ? " per rank (" + std::to_string(o.run.batch * ranks.ranks) + " per step)" : "")
      << ", " << o.epochs << " epochs, " << describe(trainer, o.run.batch) << "\n"
      << (budget_fit ? chosen_line(*budget_fit, o.run.batch) + " (the data set included)\n" : std::string());
}

// What the memory run file (--memory-json) records about the run.
nlohmann::ordered_json memory_run_facts(const TrainOptions& o, Device device, const train::Trainer& trainer,
                                        const train::FitResult& r) {
  const train::TrainerOptions& t = trainer.options();
  const int64_t steps = r.steps - r.first_step;
  return {{"command", "train"}, {"model", o.run.model}, {"batch", o.run.batch}, {"optimizer", o.run.optimizer},
          {"precision", train::precision_name(t.precision)}, {"checkpoint", t.checkpoint.str()},
          {"accum", t.accum}, {"ranks", t.data_parallel.ranks()}, {"zero", t.data_parallel.zero},
          {"rank", t.data_parallel.group ? t.data_parallel.group->rank() : 0}, {"device", device.str()},
          {"ms_per_step", steps > 0 ? r.train_seconds * 1000.0 / static_cast<double>(steps) : 0.0},
          {"images_per_s", r.train_seconds > 0 ? static_cast<double>(r.trained_samples) / r.train_seconds : 0.0}};
}

// What --json prints.
nlohmann::ordered_json train_report(const TrainOptions& o, const nn::Module& model, const TrainData& data, Device device,
                                    const train::Trainer& trainer, const train::FitResult& r, const EpochReport& epochs,
                                    const std::optional<train::BudgetFit>& budget_fit, const TrainSummary& summary) {
  const train::TrainerOptions& t = trainer.options();
  int64_t peak_bytes = 0, peak_reserved_bytes = 0;  // over all epochs
  for (const train::EpochResult& e : r.epochs) {
    peak_bytes = std::max(peak_bytes, e.memory.allocated_bytes.peak);
    peak_reserved_bytes = std::max(peak_reserved_bytes, e.memory.reserved_bytes.peak);
  }
  nlohmann::ordered_json j = {{"command", "train"},
                              {"model", o.run.model},
                              {"parameters", model.num_parameters()},
                              {"data", o.data},
                              {"samples", data.train.size()},
                              {"classes", data.train.num_classes},
                              {"device", device.str()},
                              {"optimizer", {{"name", o.run.optimizer}, {"lr", o.lr}, {"momentum", o.momentum},
                                             {"nesterov", o.nesterov}, {"weight_decay", o.weight_decay},
                                             {"schedule", o.schedule}}},
                              {"batch", o.run.batch},
                              {"precision", train::precision_name(t.precision)},
                              {"checkpoint", t.checkpoint.str()},
                              {"checkpoint_segments", trainer.checkpoint_segments()},
                              {"accum", t.accum},
                              {"ranks", t.data_parallel.ranks()},
                              {"zero", t.data_parallel.zero},
                              {"loss_scale", trainer.loss_scale()},
                              {"skipped_steps", trainer.skipped_steps()},
                              {"seed", o.seed},
                              {"resumed_at_step", r.first_step},
                              {"epochs", epochs.rows()},
                              {"peak_mib_by_category", epochs.peaks()},
                              {"peak_bytes", peak_bytes},
                              {"peak_reserved_bytes", peak_reserved_bytes},
                              {"final_accuracy", summary.final_accuracy},
                              {"final_loss", summary.final_loss},
                              {"seconds", summary.seconds}};
  if (budget_fit) {
    const train::BudgetCandidate& chosen = *budget_fit->chosen;
    j["memory_budget"] = {{"bytes", budget_fit->budget},
                          {"predicted_peak_bytes", chosen.prediction.peak_bytes},
                          {"predicted_peak_reserved_bytes", chosen.prediction.peak_reserved_bytes},
                          {"modelled_slowdown", chosen.slowdown}};
  }
  return j;
}

}  // namespace

RunFlags TrainOptions::unset_run_flags() {
  RunFlags f;
  f.model = "convnet";
  f.batch = 0;
  f.threads = 0;
  f.optimizer.clear();
  f.device.clear();
  return f;
}

TrainOptions with_recipe(TrainOptions o) {
  const models::Recipe r = models::default_recipe(o.run.model);
  if (o.epochs <= 0) o.epochs = r.epochs;
  if (o.run.batch <= 0) o.run.batch = r.batch;
  if (o.lr < 0) o.lr = r.lr;
  if (o.weight_decay < 0) o.weight_decay = r.weight_decay;
  if (o.run.optimizer.empty()) o.run.optimizer = r.optimizer;
  if (o.schedule.empty()) o.schedule = r.schedule;
  o.nesterov = o.nesterov && r.nesterov;
  return o;
}

CLI::App* add_train_command(CLI::App& app, TrainOptions& o) {
  CLI::App* cmd = app.add_subcommand("train", "Train a model and report loss and accuracy per epoch");
  add_run_flags(cmd, o.run, RunFlagUse::train);
  cmd->add_option("--data", o.data, "Dataset: fashion-mnist | spirals | blobs (synthetic, generated from --seed)")
      ->check(one_of(data_names()))
      ->capture_default_str();
  cmd->add_option("--data-dir", o.data_dir, "Fashion-MNIST folder (default /usr/share/datasets/fashion-mnist)");
  cmd->add_flag("!--no-nesterov", o.nesterov, "Plain momentum instead of the recipe's Nesterov momentum");
  cmd->add_option("--save", o.save,
                  "Write a training checkpoint after each epoch (atomically): the weights as safetensors, plus the "
                  "optimizer state, loss scaler, position and random state that --resume needs");
  cmd->add_option("--save-every", o.save_every, "Also write the --save checkpoint every N training steps")
      ->check(positive_integer());
  cmd->add_option("--resume", o.resume,
                  "Continue the run saved in this checkpoint (same options; the result is bit for bit the "
                  "uninterrupted run's)");
  cmd->add_option("--load", o.load, "Read the weights (safetensors, or a checkpoint's weights) before training");
  cmd->add_option("--samples-per-class", o.samples_per_class, "Synthetic data: points per class")
      ->check(positive_integer())
      ->capture_default_str();
  cmd->add_option("--classes", o.classes, "Synthetic data: number of classes")
      ->check(integer_between(2, 1000, "a whole number of classes"))
      ->capture_default_str();
  cmd->add_option("--noise", o.noise, "Synthetic data: spirals' angle jitter (radians) / blobs' std")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--epochs", o.epochs, "Passes over the training set (default: the model's recipe)")
      ->check(positive_integer());
  cmd->add_option("--lr", o.lr, "(Peak) learning rate (default: the model's recipe)")->check(non_negative_number());
  cmd->add_option("--momentum", o.momentum, "SGD momentum")->check(fraction())->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "Weight decay, L2 for sgd and adam, decoupled for adamw (default: the model's "
                  "recipe, given to adamw too in place of AdamW's own default 0.01)")
      ->check(non_negative_number());
  cmd->add_option("--schedule", o.schedule,
                  "Learning-rate schedule, per step: constant | step | cosine | onecycle (default: the recipe's)")
      ->check(one_of({"constant", "step", "cosine", "onecycle"}));
  cmd->add_option("--seed", o.seed, "Seed for data, initialisation and shuffling")
      ->check(seed_value())
      ->capture_default_str();
  cmd->add_flag("!--no-progress", o.progress, "Hide the progress bar (it is also hidden when stdout is not a terminal)");
  cmd->add_option("--min-accuracy", o.min_accuracy, "Exit with code 2 if the final accuracy is below this fraction")
      ->check(fraction());
  cmd->add_flag("--detect-anomaly", o.detect_anomaly,
                "Check every op's output and gradient for inf/NaN and stop at the first, naming the op (slow)");
  add_memory_options(cmd, o.memory);
  return cmd;
}

namespace {

// This rank's part of each epoch (all of it in one process).
data::DataLoaderOptions for_rank(data::DataLoaderOptions options, const RankRun& ranks, data::ShardEnds ends) {
  return ranks.group ? options.shard(ranks.rank, ranks.ranks, ends) : options;
}

}  // namespace

TrainSummary run_train(const TrainOptions& options, std::ostream& console) {
  const TrainOptions o = with_recipe(options);
  check_run_options(o);
  const Clock::time_point run_start = Clock::now();
  if (o.run.threads > 0) omp_set_num_threads(o.run.threads);
  manual_seed(o.seed);
  const Device device = choose_device(o.run.device);
  train::TrainerOptions techniques = checked_techniques(o.run);  // bad values fail before anything loads
  const RankRun ranks = start_rank_run(techniques.data_parallel.zero);
  techniques.data_parallel.group = ranks.group;
  std::ostream& out = ranks.shown(console);  // rank 0 prints
  // Before the model exists, so the report sees parameters and optimizer state being created.
  MemorySession memory_session(rank_memory_options(o.memory, ranks.rank), device,
                               o.run.model + " on " + o.data + ", batch " + std::to_string(o.run.batch) + ", " +
                                   (o.run.memory_budget.empty() ? describe(techniques, o.run.batch)
                                                                : "--memory-budget " + o.run.memory_budget));
  const TrainData data = load_train_data(o.data, o.data_dir, synthetic_options(o));
  const int threads = o.run.threads > 0 ? o.run.threads : omp_get_max_threads();
  train::Workload workload = training_workload(o, data, device, techniques);
  workload.ranks = ranks.ranks;
  const std::optional<train::BudgetFit> budget_fit = fit_run_budget(o.run, workload, threads);
  EMBER_CHECK(!o.detect_anomaly || workload.trainer.precision == train::Precision::fp32,
              "ember train: --detect-anomaly stops at the first inf/NaN, but under --precision fp16 overflowing "
              "gradients are expected (the loss scaler skips those steps); look for anomalies with --precision fp32");
  std::optional<DetectAnomalyGuard> anomaly_mode;
  if (o.detect_anomaly) anomaly_mode.emplace();

  std::shared_ptr<nn::Module> model = workload.model();
  if (!o.load.empty()) train::load_weights(o.load, *model);
  model->to(device);
  model->train();
  train::Trainer trainer(model, workload.optimizer, workload.trainer);
  advise_on_out_of_memory(trainer, workload, threads);
  data::DataLoader train_loader(data.train,
                                for_rank(loader_options(data, o.run.batch, true, o.seed, device), ranks, data::ShardEnds::pad));
  // Never more than a training micro-batch: what fits a memory budget for training fits for evaluation.
  const int64_t eval_batch = std::min(kEvalBatch, o.run.batch / workload.trainer.accum);
  data::DataLoader eval_loader(data.test, for_rank(loader_options(data, eval_batch, false, o.seed, device), ranks,
                                                   data::ShardEnds::uneven));  // every test sample once

  const bool text = !o.run.json;
  EpochReport report(out, text,
                     o.progress && text && ranks.prints() && &console == &std::cout && ProgressBar::stdout_is_terminal(),
                     o.epochs, train_loader.epoch_size());
  if (text) {
    print_banner(o, *model, data.train, device, trainer, budget_fit, ranks, out);
    out << report.header() << std::flush;
  }
  train::FitCallbacks callbacks = report.callbacks();
  callbacks.before_step = [&](int64_t step) { memory_session.begin_step(step); };
  const train::FitResult r =
      train::fit(trainer, train_loader, &eval_loader, fit_options(o, workload.trainer, train_loader.batches_per_epoch()), callbacks);

  TrainSummary summary;
  summary.final_accuracy = r.final_eval ? r.final_eval->accuracy : 0.0;
  summary.final_loss = r.final_loss;
  summary.seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
  summary.report = train_report(o, *model, data, device, trainer, r, report, budget_fit, summary);
  const std::string memory_files = memory_session.finish(memory_run_facts(o, device, trainer, r));
  if (!memory_files.empty() && text)
    out << "memory report written to " << memory_files << (ranks.ranks > 1 ? " (each rank its own: .rank<r>)" : "")
        << "\n";
  if (o.run.json) out << summary.report.dump(2) << "\n";
  else
    out << "final " << (data.test.name == data.train.name ? "training" : "test") << " accuracy " << std::fixed
        << std::setprecision(2) << 100.0 * summary.final_accuracy << "% after " << o.epochs << " epochs ("
        << summary.seconds << " s)\n";
  return summary;
}

int train_command(const TrainOptions& options, std::ostream& out) {
  const TrainSummary summary = run_train(options, out);
  if (summary.final_accuracy < options.min_accuracy) {
    std::cerr << "ember train: final accuracy " << summary.final_accuracy << " is below --min-accuracy "
              << options.min_accuracy << "\n";
    return 2;
  }
  return 0;
}

}  // namespace ember::apps
