#include "apps/train_command.h"

#include <algorithm>

#include <omp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/memory_budget.h"
#include "apps/output_path.h"
#include "apps/progress_bar.h"
#include "apps/report_table.h"
#include "apps/thread_count.h"
#include "apps/train_resume.h"
#include "apps/train_setup.h"
#include "autograd/anomaly_mode.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/cuda_runtime.h"
#include "core/generator.h"
#include "data/data_loader.h"
#include "data/synthetic.h"
#include "memory/byte_size.h"
#include "memory/memory.h"
#include "models/metrics.h"
#include "models/zoo.h"
#include "optim/lr_schedule.h"
#include "optim/sgd.h"
#include "optim/optimizer.h"
#include "train/training_checkpoint.h"
#include "train/weights_file.h"

namespace ember::apps {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kEvalBatch = 1024;  // the most the accuracy pass takes at once
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

Device choose_device(const std::string& spec) {
  if (spec.empty()) return cuda::is_available() ? kCUDA : kCPU;
  const Device device(spec);
  if (device.is_cuda()) cuda::check_device(device, "train");
  return device;
}

// Peak bytes of each memory category this epoch, in MiB, as JSON.
nlohmann::ordered_json peak_by_category(Device device) {
  const MemoryStats stats = memory_stats(device);
  nlohmann::ordered_json j;
  for (int c = 0; c < kNumMemoryCategories; ++c)
    j[category_name(static_cast<MemoryCategory>(c))] = static_cast<double>(stats.by_category[c].peak) / kBytesPerMiB;
  return j;
}

}  // namespace

Evaluation evaluate_model(nn::Module& model, data::DataLoader& loader) {
  NoGradGuard no_grad;
  model.eval();
  int64_t correct = 0, seen = 0;
  double loss_sum = 0.0;
  const std::vector<Tensor> params = model.parameters();
  const DType compute = params.empty() ? DType::f32 : params.front().dtype();
  for (data::Batch& batch : loader) {
    const Tensor logits = model.forward(batch.images.dtype() == compute ? batch.images : to_dtype(batch.images, compute));
    correct += models::count_correct(logits, batch.labels);
    loss_sum += static_cast<double>(cross_entropy(logits, batch.labels).item<float>()) * static_cast<double>(batch.size());
    seen += batch.size();
  }
  model.train();
  Evaluation e;
  if (seen > 0) {
    e.accuracy = static_cast<double>(correct) / static_cast<double>(seen);
    e.loss = loss_sum / static_cast<double>(seen);
  }
  return e;
}

TrainOptions with_recipe(TrainOptions o) {
  const Recipe r = default_recipe(o.model);
  if (o.epochs <= 0) o.epochs = r.epochs;
  if (o.batch <= 0) o.batch = r.batch;
  if (o.lr < 0) o.lr = r.lr;
  if (o.weight_decay < 0) o.weight_decay = r.weight_decay;
  if (o.optimizer.empty()) o.optimizer = r.optimizer;
  if (o.schedule.empty()) o.schedule = r.schedule;
  o.nesterov = o.nesterov && r.nesterov;
  return o;
}

CLI::App* add_train_command(CLI::App& app, TrainOptions& o) {
  CLI::App* cmd = app.add_subcommand("train", "Train a model and report loss and accuracy per epoch");
  cmd->add_option("--model", o.model, "Model from the zoo")
      ->check(one_of(models::model_names()))
      ->capture_default_str();
  cmd->add_option("--data", o.data, "Dataset: fashion-mnist | spirals | blobs (synthetic, generated from --seed)")
      ->check(one_of(data_names()))
      ->capture_default_str();
  cmd->add_option("--data-dir", o.data_dir, "Fashion-MNIST folder (default /usr/share/datasets/fashion-mnist)");
  cmd->add_option("--optimizer", o.optimizer, "sgd | adam | adamw (default: the model's recipe)")
      ->check(one_of({"sgd", "adam", "adamw"}));
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
  cmd->add_option("--batch", o.batch, "Mini-batch size (default: the model's recipe)")->check(positive_integer());
  cmd->add_option("--lr", o.lr, "(Peak) learning rate (default: the model's recipe)")->check(non_negative_number());
  cmd->add_option("--momentum", o.momentum, "SGD momentum")->check(fraction())->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "Weight decay, L2 for sgd and adam, decoupled for adamw (default: the model's "
                  "recipe, given to adamw too in place of AdamW's own default 0.01)")
      ->check(non_negative_number());
  cmd->add_option("--schedule", o.schedule,
                  "Learning-rate schedule, per step: constant | step | cosine | onecycle (default: the recipe's)")
      ->check(one_of({"constant", "step", "cosine", "onecycle"}));
  cmd->add_option("--device", o.device, "cpu | cuda | cuda:N (default: cuda when a GPU is available, else cpu)");
  cmd->add_option("--threads", o.threads, "CPU threads (0: OpenMP default)")
      ->check(thread_count(0))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed for data, initialisation and shuffling")
      ->check(seed_value())
      ->capture_default_str();
  cmd->add_flag("!--no-progress", o.progress, "Hide the progress bar (it is also hidden when stdout is not a terminal)");
  cmd->add_flag("--json", o.json, "Print one JSON document instead of the table and progress bar");
  cmd->add_option("--min-accuracy", o.min_accuracy, "Exit with code 2 if the final accuracy is below this fraction")
      ->check(fraction());
  cmd->add_flag("--detect-anomaly", o.detect_anomaly,
                "Check every op's output and gradient for inf/NaN and stop at the first, naming the op (slow)");
  add_memory_options(cmd, o.memory);
  add_technique_options(cmd, o.technique);
  cmd->add_option("--memory-budget", o.memory_budget,
                  "Choose --precision, --checkpoint and --accum so training fits this many bytes, the data set "
                  "included (e.g. 64MiB), at the least modelled slowdown; see `ember plan --memory-budget`");
  return cmd;
}

namespace {

// The step this run will make, as the planner simulates it: the data sets' tensors
// allocated first (on the CPU they live under the same limit), and the batches the
// training loader holds at once (its prefetched ones and the one in use).
WorkloadSpec training_workload(const TrainOptions& o, const TrainData& train_data, Device device,
                               const TechniqueOptions& technique) {
  WorkloadSpec spec{o.model, o.batch, o.optimizer, technique, device};
  spec.data_batches = static_cast<int>(loader_options(train_data, o.batch, true, o.seed, device).prefetch_batches()) + 1;
  spec.sample = sample_shape(train_data.train);
  spec.classes = train_data.train.num_classes;
  if (device.is_cpu()) {
    std::vector<const void*> seen;  // synthetic data's test set is its training set
    for (const data::Dataset* d : {&train_data.train, &train_data.test})
      for (const Tensor* t : {&d->images, &d->labels}) {
        if (std::find(seen.begin(), seen.end(), t->data_ptr()) != seen.end()) continue;
        seen.push_back(t->data_ptr());
        spec.resident_bytes.push_back(static_cast<int64_t>(t->nbytes()));
      }
  }
  return spec;
}

}  // namespace

namespace {

// What can be checked before anything loads: flags that contradict each other, output paths.
void check_run_options(const TrainOptions& o) {
  EMBER_CHECK(o.resume.empty() || o.load.empty(),
              "ember train: --resume continues a saved run (its weights included) and --load starts a new run from "
              "weights; give one of them");
  EMBER_CHECK(o.save_every == 0 || !o.save.empty(),
              "ember train: --save-every " << o.save_every << " needs --save FILE to say where the checkpoint goes");
  check_writable(o.save, "--save");  // the memory outputs: MemorySession's constructor
}

}  // namespace

TrainSummary run_train(const TrainOptions& options, std::ostream& out) {
  const TrainOptions o = with_recipe(options);
  check_run_options(o);
  const Clock::time_point run_start = Clock::now();
  if (o.threads > 0) omp_set_num_threads(o.threads);
  manual_seed(o.seed);
  const Device device = choose_device(o.device);
  train::TrainerOptions trainer_opts = trainer_options(o.technique, o.batch);  // bad values fail here
  if (!o.memory_budget.empty()) check_budget_chooses_techniques(o.technique);  // before the data loads
  // Before the model exists, so the report sees parameters and optimizer state being created.
  MemorySession memory_session(o.memory, device,
                               o.model + " on " + o.data + ", batch " + std::to_string(o.batch) + ", " +
                                   (o.memory_budget.empty() ? describe(o.technique, o.batch)
                                                            : "--memory-budget " + o.memory_budget));

  data::SyntheticOptions data_options;
  data_options.samples_per_class = o.samples_per_class;
  data_options.classes = o.classes;
  data_options.noise = o.noise;
  data_options.seed = o.seed;
  const TrainData train_data = load_train_data(o.data, o.data_dir, data_options);
  const data::Dataset& dataset = train_data.train;
  const int64_t n = dataset.size();

  const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
  WorkloadSpec planned = training_workload(o, train_data, device, o.technique);
  std::optional<BudgetFit> budget_fit;
  if (!o.memory_budget.empty()) {
    budget_fit = fit_budget_flag(o.memory_budget, planned, threads);
    planned.technique = budget_fit->chosen->technique;
    trainer_opts = trainer_options(planned.technique, o.batch);
  }

  EMBER_CHECK(!o.detect_anomaly || trainer_opts.precision == train::Precision::fp32,
              "ember train: --detect-anomaly stops at the first inf/NaN, but under --precision fp16 overflowing "
              "gradients are expected (the loss scaler skips those steps); look for anomalies with --precision fp32");
  std::optional<DetectAnomalyGuard> anomaly_mode;
  if (o.detect_anomaly) anomaly_mode.emplace();

  std::shared_ptr<nn::Module> model = models::make_model(o.model, sample_shape(dataset), dataset.num_classes);
  if (!o.load.empty()) train::load_weights(o.load, *model);
  model->to(device);
  model->train();
  train::Trainer trainer(
      model,
      [&](std::vector<Tensor> params) {
        return make_optimizer(o.optimizer, std::move(params), o.lr, o.momentum, o.nesterov, o.weight_decay);
      },
      trainer_opts);
  trainer.set_out_of_memory_advice([planned, threads, device](int64_t /*micro_batch*/) {
    return out_of_memory_advice(planned, threads, allocator_for(device).backend().capacity());
  });

  // A resumed run is this process's run from the checkpoint's position on.
  const data::SafetensorsMetadata identity = run_identity(o, trainer_opts);
  train::TrainingPosition start;
  if (!o.resume.empty()) {
    const train::TrainingCheckpoint checkpoint = train::read_training_checkpoint(o.resume);
    check_same_run(o.resume, checkpoint.metadata, identity);
    train::restore(checkpoint, trainer);
    start = checkpoint.position;
  }
  auto save_checkpoint = [&](const train::TrainingPosition& at) {
    if (!o.save.empty()) train::save_training_checkpoint(o.save, trainer, at, identity);
  };

  data::DataLoader train_loader(dataset, loader_options(train_data, o.batch, true, o.seed, device));
  // Never more than a training micro-batch: what fits a memory budget for training fits for evaluation.
  const int64_t eval_batch = std::min(kEvalBatch, o.batch / trainer_opts.accum);
  data::DataLoader eval_loader(train_data.test, loader_options(train_data, eval_batch, false, o.seed, device));

  ReportTable table({{"epoch", "epoch", 5, 0},
                     {"loss", "loss", 8, 4},
                     {"accuracy_percent", "train acc %", 11, 2},
                     {"test_accuracy_percent", "test acc %", 10, 2},
                     {"seconds", "time s", 7, 2},
                     {"samples_per_s", "images/s", 10, 0},
                     {"peak_mib", "peak MiB", 9, 2},
                     {"peak_param_mib", "param", 7, 2},
                     {"peak_grad_mib", "grad", 7, 2},
                     {"peak_optim_mib", "optim", 7, 2},
                     {"peak_master_mib", "master", 7, 2},
                     {"peak_act_mib", "act", 7, 2},
                     {"peak_data_mib", "data", 7, 2}});
  nlohmann::ordered_json peaks = nlohmann::ordered_json::array();
  const bool show_progress = o.progress && !o.json && &out == &std::cout && ProgressBar::stdout_is_terminal();
  if (!o.json) {
    out << "ember train: " << model->name() << " (" << model->num_parameters() << " parameters) on " << o.data
        << " (" << n << " samples, " << dataset.num_classes << " classes), " << device.str() << ", " << o.optimizer
        << " lr " << o.lr << (o.optimizer == "sgd" ? " momentum " : "");
    if (o.optimizer == "sgd") out << o.momentum;
    out
        << (o.optimizer == "sgd" && o.nesterov ? " nesterov" : "") << " wd " << o.weight_decay << " ("
        << o.schedule << "), batch " << o.batch << ", " << o.epochs << " epochs, " << describe(trainer, o.batch)
        << "\n"
        << (budget_fit ? chosen_line(*budget_fit, o.batch) + " (the data set included)\n" : std::string())
        << table.header() << std::flush;
  }

  TrainSummary summary;
  const std::unique_ptr<optim::LrSchedule> schedule =
      optim::make_schedule(o.schedule, o.lr, train_loader.batches_per_epoch() * o.epochs);  // effective steps
  const int64_t first_step = trainer.steps();
  int64_t step = first_step;
  int64_t trained_samples = 0;                       // by this process
  int64_t peak_bytes = 0, peak_reserved_bytes = 0;  // over all epochs
  double train_seconds = 0.0;                         // the training loops, evaluation left out
  train_loader.set_next_epoch(start.epoch, start.batch);
  for (int epoch = static_cast<int>(start.epoch) + 1; epoch <= o.epochs; ++epoch) {
    reset_peak_stats(device);
    const Clock::time_point epoch_start = Clock::now();
    const bool resumed_epoch = epoch == start.epoch + 1;
    int64_t train_correct = resumed_epoch ? start.correct : 0;
    double loss_sum = resumed_epoch ? start.loss_sum : 0.0;
    int64_t done = resumed_epoch ? start.seen : 0;
    const int64_t done_before = done;
    ProgressBar bar(out, n, "epoch " + std::to_string(epoch) + "/" + std::to_string(o.epochs), show_progress);
    for (data::Batch& batch : train_loader) {
      memory_session.begin_step(step - first_step);
      schedule->apply(trainer.optimizer(), step++);
      const train::StepResult r = trainer.step(batch.images, batch.labels);
      train_correct += r.correct;
      loss_sum += r.loss * static_cast<double>(batch.size());
      done += batch.size();
      bar.update(done, loss_sum / static_cast<double>(done));
      if (o.save_every > 0 && trainer.steps() % o.save_every == 0)
        save_checkpoint({epoch - 1, batch.index + 1, loss_sum, train_correct, done});
    }
    bar.finish();
    const double seconds = std::chrono::duration<double>(Clock::now() - epoch_start).count();
    train_seconds += seconds;
    trained_samples += done - done_before;
    summary.final_loss = loss_sum / static_cast<double>(n);
    const MemoryStats epoch_stats = memory_stats(device);
    peak_bytes = std::max(peak_bytes, epoch_stats.allocated_bytes.peak);
    peak_reserved_bytes = std::max(peak_reserved_bytes, epoch_stats.reserved_bytes.peak);
    const double peak_mib = static_cast<double>(epoch_stats.allocated_bytes.peak) / kBytesPerMiB;
    const nlohmann::ordered_json peak = peak_by_category(device);
    summary.final_accuracy = evaluate_model(*model, eval_loader).accuracy;
    const std::string row = table.add_row(
        {int64_t{epoch}, summary.final_loss, 100.0 * static_cast<double>(train_correct) / static_cast<double>(n),
         100.0 * summary.final_accuracy, seconds, static_cast<double>(done - done_before) / seconds, peak_mib,
         peak["parameter"].get<double>(), peak["gradient"].get<double>(), peak["optimizer_state"].get<double>(),
         peak["master_weights"].get<double>(),
         peak["activation"].get<double>(), peak["data"].get<double>()});
    peaks.push_back(peak);
    save_checkpoint({epoch, 0, 0.0, 0, 0});
    if (!o.json) out << row << std::flush;
  }
  if (start.epoch >= o.epochs) summary.final_accuracy = evaluate_model(*model, eval_loader).accuracy;  // nothing left
  summary.seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
  const std::string memory_files = memory_session.finish(
      {{"command", "train"}, {"model", o.model}, {"batch", o.batch}, {"optimizer", o.optimizer},
       {"precision", train::precision_name(trainer_opts.precision)}, {"checkpoint", trainer_opts.checkpoint.str()},
       {"accum", trainer_opts.accum}, {"device", device.str()},
       {"ms_per_step", step > first_step ? train_seconds * 1000.0 / static_cast<double>(step - first_step) : 0.0},
       {"images_per_s", train_seconds > 0 ? static_cast<double>(trained_samples) / train_seconds : 0.0}});
  if (!memory_files.empty() && !o.json) out << "memory report written to " << memory_files << "\n";

  summary.report = {{"command", "train"},
                    {"model", o.model},
                    {"parameters", model->num_parameters()},
                    {"data", o.data},
                    {"samples", n},
                    {"classes", dataset.num_classes},
                    {"device", device.str()},
                    {"optimizer", {{"name", o.optimizer}, {"lr", o.lr}, {"momentum", o.momentum},
                                   {"nesterov", o.nesterov}, {"weight_decay", o.weight_decay},
                                   {"schedule", o.schedule}}},
                    {"batch", o.batch},
                    {"precision", train::precision_name(trainer_opts.precision)},
                    {"checkpoint", trainer_opts.checkpoint.str()},
                    {"checkpoint_segments", trainer.checkpoint_segments()},
                    {"accum", trainer_opts.accum},
                    {"loss_scale", trainer.loss_scale()},
                    {"skipped_steps", trainer.skipped_steps()},
                    {"seed", o.seed},
                    {"resumed_at_step", first_step},
                    {"epochs", table.json()},
                    {"peak_mib_by_category", peaks},
                    {"peak_bytes", peak_bytes},
                    {"peak_reserved_bytes", peak_reserved_bytes},
                    {"final_accuracy", summary.final_accuracy},
                    {"final_loss", summary.final_loss},
                    {"seconds", summary.seconds}};
  if (budget_fit) {
    const BudgetCandidate& chosen = *budget_fit->chosen;
    summary.report["memory_budget"] = {{"bytes", budget_fit->budget},
                                       {"predicted_peak_bytes", chosen.prediction.peak_bytes},
                                       {"predicted_peak_reserved_bytes", chosen.prediction.peak_reserved_bytes},
                                       {"modelled_slowdown", chosen.slowdown}};
  }
  if (o.json) {
    out << summary.report.dump(2) << "\n";
  } else {
    out << "final " << (train_data.test.name == dataset.name ? "training" : "test") << " accuracy " << std::fixed << std::setprecision(2) << 100.0 * summary.final_accuracy
        << "% after " << o.epochs << " epochs (" << summary.seconds << " s)\n";
  }
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
