#include "apps/eval_command.h"

#include <omp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <vector>

#include "apps/train_command.h"
#include "apps/train_setup.h"
#include "autograd/ops.h"
#include "core/cuda_runtime.h"
#include "core/generator.h"
#include "kernels/factories.h"
#include "models/zoo.h"
#include "optim/sgd.h"

namespace ember::apps {

namespace {
constexpr int64_t kEvalBatch = 1024;
constexpr int kBenchPool = 8;  // distinct synthetic batches, cycled (as the libtorch peer)
}  // namespace

CLI::App* add_eval_command(CLI::App& app, EvalOptions& o) {
  CLI::App* cmd = app.add_subcommand("eval", "Test accuracy and loss of saved weights");
  cmd->add_option("--model", o.model, "Model from the zoo")->check(CLI::IsMember(models::model_names()))->capture_default_str();
  cmd->add_option("--load", o.load, "Weights (safetensors) written by ember train --save")->required();
  cmd->add_option("--data", o.data, "Dataset")->check(CLI::IsMember(data_names()))->capture_default_str();
  cmd->add_option("--data-dir", o.data_dir, "Fashion-MNIST folder");
  cmd->add_option("--device", o.device, "cpu | cuda | cuda:N");
  cmd->add_option("--threads", o.threads, "CPU threads (0: OpenMP default)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", o.json, "Print JSON");
  return cmd;
}

int eval_command(const EvalOptions& o, std::ostream& out) {
  if (o.threads > 0) omp_set_num_threads(o.threads);
  const Device device = o.device.empty() ? (cuda::is_available() ? kCUDA : kCPU) : Device(o.device);
  const TrainData d = load_train_data(o.data, o.data_dir, {});
  std::shared_ptr<nn::Module> model = models::make_model(o.model, sample_shape(d.test), d.test.num_classes);
  load_weights(o.load, *model);
  model->to(device);
  data::DataLoader loader(d.test, loader_options(d, kEvalBatch, false, 0, device));
  const Evaluation e = evaluate_model(*model, loader);
  if (o.json) {
    out << nlohmann::ordered_json{{"command", "eval"}, {"model", o.model}, {"data", o.data},
                                  {"samples", d.test.size()}, {"accuracy", e.accuracy}, {"loss", e.loss}}
               .dump()
        << "\n";
  } else {
    out << std::fixed << std::setprecision(2) << "ember eval: " << o.model << " on " << d.test.name << " ("
        << d.test.size() << " samples): accuracy " << 100.0 * e.accuracy << "%, loss " << std::setprecision(4)
        << e.loss << "\n";
  }
  return 0;
}

CLI::App* add_bench_train_command(CLI::App& app, BenchTrainOptions& o) {
  CLI::App* cmd = app.add_subcommand("bench-train", "Training images/s on synthetic 28x28 batches");
  cmd->add_option("--model", o.model, "lenet5 | convnet (any zoo model)")
      ->check(CLI::IsMember(models::model_names()))
      ->capture_default_str();
  cmd->add_option("--batch", o.batch, "Batch size")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--threads", o.threads, "CPU threads")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--steps", o.steps, "Timed steps")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "Untimed steps first")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--device", o.device, "cpu | cuda | cuda:N")->capture_default_str();
  return cmd;
}

double bench_train_command(const BenchTrainOptions& o, std::ostream& out) {
  using Clock = std::chrono::steady_clock;
  omp_set_num_threads(o.threads);
  manual_seed(0);
  const Device device(o.device);
  std::shared_ptr<nn::Module> model = models::make_model(o.model, Shape{1, 28, 28}, 10);
  model->to(device);
  std::vector<Tensor> images, labels;
  for (int i = 0; i < kBenchPool; ++i) {
    images.push_back(randn({o.batch, 1, 28, 28}).to(device));
    // floor(U[0, 10)) as i64: labels 0..9
    labels.push_back(rand({o.batch}, {}, 0.0, 10.0).to(DType::i64).to(device));
  }
  optim::SGD sgd(model->parameters(), optim::SgdOptions(0.05).momentum(0.9));
  model->train();
  auto step = [&](int i) {
    sgd.zero_grad();
    Tensor loss = cross_entropy(model->forward(images[i % kBenchPool]), labels[i % kBenchPool]);
    loss.backward();
    sgd.step();
  };
  for (int i = 0; i < o.warmup; ++i) step(i);
  cuda::synchronize();
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < o.steps; ++i) step(i);
  cuda::synchronize();  // GPU work is asynchronous: time it to its end
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const double rate = static_cast<double>(o.batch) * o.steps / seconds;
  out << nlohmann::ordered_json{{"peer", "ember"}, {"model", o.model}, {"batch", o.batch}, {"threads", o.threads},
                                {"device", device.str()}, {"images_per_s", std::round(rate * 10.0) / 10.0}}
             .dump()
      << "\n";
  return rate;
}

}  // namespace ember::apps
