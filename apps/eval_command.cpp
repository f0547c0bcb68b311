#include "apps/eval_command.h"

#include <omp.h>

#include <CLI/CLI.hpp>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/thread_count.h"
#include "apps/train_setup.h"
#include "core/cuda_runtime.h"
#include "models/zoo.h"
#include "train/evaluate.h"
#include "train/weights_file.h"

namespace ember::apps {

namespace {
constexpr int64_t kEvalBatch = 1024;
}  // namespace

CLI::App* add_eval_command(CLI::App& app, EvalOptions& o) {
  CLI::App* cmd = app.add_subcommand("eval", "Test accuracy and loss of saved weights");
  cmd->add_option("--model", o.model, "Model from the zoo")->check(one_of(models::model_names()))->capture_default_str();
  cmd->add_option("--load", o.load, "Weights (safetensors) written by ember train --save")->required();
  cmd->add_option("--data", o.data, "Dataset")->check(one_of(data_names()))->capture_default_str();
  cmd->add_option("--data-dir", o.data_dir, "Fashion-MNIST folder");
  cmd->add_option("--device", o.device, "cpu | cuda | cuda:N");
  cmd->add_option("--threads", o.threads, "CPU threads (0: OpenMP default)")->check(thread_count(0));
  cmd->add_flag("--json", o.json, "Print JSON");
  return cmd;
}

int eval_command(const EvalOptions& o, std::ostream& out) {
  if (o.threads > 0) omp_set_num_threads(o.threads);
  const Device device = o.device.empty() ? (cuda::is_available() ? kCUDA : kCPU) : Device(o.device);
  const TrainData d = load_train_data(o.data, o.data_dir, {});
  std::shared_ptr<nn::Module> model = models::make_model(o.model, sample_shape(d.test), d.test.num_classes);
  train::load_weights(o.load, *model);
  model->to(device);
  data::DataLoader loader(d.test, loader_options(d, kEvalBatch, false, 0, device));
  const train::Evaluation e = train::evaluate(*model, loader);
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

}  // namespace ember::apps
