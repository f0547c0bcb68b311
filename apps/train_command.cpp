#include "apps/train_command.h"

#include <omp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <vector>

#include "apps/progress_bar.h"
#include "apps/report_table.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/cuda_runtime.h"
#include "core/generator.h"
#include "data/data_loader.h"
#include "data/synthetic.h"
#include "memory/memory.h"
#include "models/metrics.h"
#include "models/zoo.h"
#include "optim/lr_schedule.h"
#include "optim/sgd.h"

namespace ember::apps {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kEvalBatch = 1024;  // bounds the activation memory of the accuracy pass
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

Device choose_device(const std::string& spec) {
  if (spec.empty()) return cuda::is_available() ? kCUDA : kCPU;
  const Device device(spec);
  if (device.is_cuda()) cuda::check_device(device, "train");
  return device;
}

// Accuracy over every batch of `loader`, in eval mode and without a graph.
double evaluate(nn::Module& model, data::DataLoader& loader) {
  NoGradGuard no_grad;
  model.eval();
  int64_t correct = 0, seen = 0;
  for (data::Batch& batch : loader) {
    correct += models::count_correct(model.forward(batch.images), batch.labels);
    seen += batch.size();
  }
  model.train();
  return seen > 0 ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
}

}  // namespace

CLI::App* add_train_command(CLI::App& app, TrainOptions& o) {
  CLI::App* cmd = app.add_subcommand("train", "Train a model with SGD and report loss and accuracy per epoch");
  cmd->add_option("--model", o.model, "Model from the zoo")
      ->check(CLI::IsMember(models::model_names()))
      ->capture_default_str();
  cmd->add_option("--data", o.data, "Dataset: spirals | blobs (synthetic, generated from --seed)")
      ->check(CLI::IsMember({"spirals", "blobs"}))
      ->capture_default_str();
  cmd->add_option("--samples-per-class", o.samples_per_class, "Synthetic data: points per class")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--classes", o.classes, "Synthetic data: number of classes")
      ->check(CLI::Range(int64_t{2}, int64_t{1000}))
      ->capture_default_str();
  cmd->add_option("--noise", o.noise, "Synthetic data: spirals' angle jitter (radians) / blobs' std")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--epochs", o.epochs, "Passes over the training set")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--batch", o.batch, "Mini-batch size")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--lr", o.lr, "Learning rate")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--momentum", o.momentum, "SGD momentum")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "L2 weight decay")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--schedule", o.schedule, "Learning-rate schedule, per step: constant | step | cosine | onecycle")
      ->check(CLI::IsMember({"constant", "step", "cosine", "onecycle"}))
      ->capture_default_str();
  cmd->add_option("--device", o.device, "cpu | cuda | cuda:N (default: cuda when a GPU is available, else cpu)");
  cmd->add_option("--threads", o.threads, "CPU threads (0: OpenMP default)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed for data, initialisation and shuffling")->capture_default_str();
  cmd->add_flag("--json", o.json, "Print one JSON document instead of the table and progress bar");
  cmd->add_option("--min-accuracy", o.min_accuracy, "Exit with code 2 if the final accuracy is below this fraction")
      ->check(CLI::Range(0.0, 1.0));
  return cmd;
}

TrainSummary run_train(const TrainOptions& o, std::ostream& out) {
  const Clock::time_point run_start = Clock::now();
  if (o.threads > 0) omp_set_num_threads(o.threads);
  manual_seed(o.seed);
  const Device device = choose_device(o.device);

  data::SyntheticOptions data_options;
  data_options.samples_per_class = o.samples_per_class;
  data_options.classes = o.classes;
  data_options.noise = o.noise;
  data_options.seed = o.seed;
  const data::Dataset dataset = data::make_synthetic(o.data, data_options);
  const int64_t n = dataset.size();

  std::vector<int64_t> sample_sizes = dataset.images.sizes();
  sample_sizes.erase(sample_sizes.begin());
  std::shared_ptr<nn::Module> model = models::make_model(o.model, Shape(sample_sizes), dataset.num_classes);
  model->to(device);
  optim::SGD sgd(model->parameters(), optim::SgdOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));

  data::DataLoaderOptions train_options;
  train_options.batch_size = o.batch;
  train_options.shuffle = true;
  train_options.seed = o.seed;
  train_options.device = device;
  data::DataLoader train_loader(dataset, train_options);
  data::DataLoaderOptions eval_options = train_options;
  eval_options.batch_size = kEvalBatch;
  eval_options.shuffle = false;
  data::DataLoader eval_loader(dataset, eval_options);

  ReportTable table({{"epoch", "epoch", 5, 0},
                     {"loss", "loss", 8, 4},
                     {"accuracy_percent", "train acc %", 11, 2},
                     {"seconds", "time s", 7, 2},
                     {"samples_per_s", "samples/s", 10, 0},
                     {"peak_mib", "peak MiB", 9, 2}});
  const bool show_progress = o.progress && !o.json && &out == &std::cout && ProgressBar::stdout_is_terminal();
  if (!o.json) {
    out << "ember train: " << model->name() << " (" << model->num_parameters() << " parameters) on " << o.data
        << " (" << n << " samples, " << dataset.num_classes << " classes), " << device.str() << ", SGD lr " << o.lr
        << " momentum " << o.momentum << " (" << o.schedule << "), batch " << o.batch << "\n"
        << table.header() << std::flush;
  }

  TrainSummary summary;
  const std::unique_ptr<optim::LrSchedule> schedule =
      optim::make_schedule(o.schedule, o.lr, train_loader.batches_per_epoch() * o.epochs);
  int64_t step = 0;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    const Clock::time_point epoch_start = Clock::now();
    ProgressBar bar(out, n, "epoch " + std::to_string(epoch) + "/" + std::to_string(o.epochs), show_progress);
    double loss_sum = 0.0;
    int64_t done = 0;
    for (data::Batch& batch : train_loader) {
      Tensor loss = cross_entropy(model->forward(batch.images), batch.labels);
      sgd.zero_grad();
      schedule->apply(sgd, step++);
      loss.backward();
      sgd.step();
      loss_sum += static_cast<double>(loss.item<float>()) * static_cast<double>(batch.size());
      done += batch.size();
      bar.update(done, loss_sum / static_cast<double>(done));
    }
    bar.finish();
    const double seconds = std::chrono::duration<double>(Clock::now() - epoch_start).count();
    summary.final_loss = loss_sum / static_cast<double>(n);
    summary.final_accuracy = evaluate(*model, eval_loader);
    const double peak_mib = static_cast<double>(memory_stats(device).allocated_bytes.peak) / kBytesPerMiB;
    const std::string row = table.add_row({int64_t{epoch}, summary.final_loss, 100.0 * summary.final_accuracy,
                                           seconds, static_cast<double>(n) / seconds, peak_mib});
    if (!o.json) out << row << std::flush;
  }
  summary.seconds = std::chrono::duration<double>(Clock::now() - run_start).count();

  summary.report = {{"command", "train"},
                    {"model", o.model},
                    {"parameters", model->num_parameters()},
                    {"data", o.data},
                    {"samples", n},
                    {"classes", dataset.num_classes},
                    {"device", device.str()},
                    {"optimizer", {{"name", "sgd"}, {"lr", o.lr}, {"momentum", o.momentum},
                                   {"weight_decay", o.weight_decay}, {"schedule", o.schedule}}},
                    {"batch", o.batch},
                    {"seed", o.seed},
                    {"epochs", table.json()},
                    {"final_accuracy", summary.final_accuracy},
                    {"final_loss", summary.final_loss},
                    {"seconds", summary.seconds}};
  if (o.json) {
    out << summary.report.dump(2) << "\n";
  } else {
    out << "final training accuracy " << std::fixed << std::setprecision(2) << 100.0 * summary.final_accuracy
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
