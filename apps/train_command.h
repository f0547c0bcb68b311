#pragma once
// `ember train`: trains a zoo model on a dataset with SGD and reports each epoch.
//
//   ember train --model mlp --data spirals --epochs 20 --batch 64 --lr 0.1 --momentum 0.9
//   ember train --model mlp --data blobs --epochs 3 --json     # one JSON document on stdout
//
// In-process (tests, other tools):
//   ember::apps::TrainOptions options;
//   options.epochs = 3;
//   ember::apps::TrainSummary s = ember::apps::run_train(options, std::cout);
#include <cstdint>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}

namespace ember::apps {

struct TrainOptions {
  std::string model = "mlp";
  std::string data = "spirals";  // spirals | blobs
  int64_t samples_per_class = 500;
  int64_t classes = 3;
  double noise = 0.2;  // synthetic data: see data::SyntheticOptions
  int epochs = 20;
  int64_t batch = 64;
  double lr = 0.1;
  double momentum = 0.9;
  double weight_decay = 0.0;
  std::string schedule = "cosine";  // optim::make_schedule: constant | step | cosine | onecycle
  std::string device;  // empty: cuda when a GPU is available, else cpu
  int threads = 0;     // CPU threads; 0 keeps OpenMP's default
  uint64_t seed = 0;
  bool json = false;
  bool progress = true;       // the bar is also off when stdout is not a terminal
  double min_accuracy = 0.0;  // exit code 2 when the final accuracy is below (smoke tests)
};

struct TrainSummary {
  double final_accuracy = 0.0;  // on the training set, after the last epoch, in eval mode
  double final_loss = 0.0;      // mean training loss of the last epoch
  double seconds = 0.0;
  nlohmann::ordered_json report;        // what --json prints
};

// Registers the `train` subcommand, filling `options` when parsed.
CLI::App* add_train_command(CLI::App& app, TrainOptions& options);
// Runs the training and prints to `out` (a table, or JSON with options.json).
TrainSummary run_train(const TrainOptions& options, std::ostream& out);
// run_train, then the exit code: 0, or 2 when the accuracy is below options.min_accuracy.
int train_command(const TrainOptions& options, std::ostream& out);

}  // namespace ember::apps
