#pragma once
// `ember train`: trains a zoo model on a dataset with SGD and reports each epoch.
// Each step runs through train::Trainer, so the memory techniques are flags.
//
//   ember train --model mlp --data spirals --epochs 20 --batch 64 --lr 0.1 --momentum 0.9
//   ember train --model convnet --precision fp16 --checkpoint sqrt --accum 4
//   ember train --model mlp --data blobs --epochs 3 --json     # one JSON document on stdout
//   ember train --model lenet5 --save run.ckpt --save-every 100  # killed? the same command with
//   ember train --model lenet5 --save run.ckpt --resume run.ckpt # continues bit for bit
//
// In-process (tests, other tools):
//   ember::apps::TrainOptions options;
//   options.epochs = 3;
//   ember::apps::TrainSummary s = ember::apps::run_train(options, std::cout);
//
// The run itself is train::fit (train/fit.h); this file turns the flags into its options and
// prints what it reports.
#include <cstdint>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/memory_session.h"
#include "apps/run_flags.h"

namespace CLI {
class App;
}

namespace ember::apps {

struct TrainOptions {
  // --model --batch --threads --optimizer --device, the techniques, --memory-budget, --json.
  // Left at these "unset" values, batch and optimizer come from the model's recipe
  // (models/recipe.h), the device from the machine (cuda when a GPU is available), the threads
  // from OpenMP.
  RunFlags run = unset_run_flags();
  std::string data = "fashion-mnist";  // fashion-mnist | spirals | blobs
  std::string data_dir;                // fashion-mnist folder; empty: data::kFashionMnistDir
  int64_t samples_per_class = 500;
  int64_t classes = 3;
  double noise = 0.2;  // synthetic data: see data::SyntheticOptions
  // Left at these "unset" values, the next four come from the model's recipe too.
  int epochs = 0;
  double lr = -1.0;
  double weight_decay = -1.0;
  std::string schedule;   // optim::make_schedule: constant | step | cosine | onecycle
  double momentum = 0.9;
  bool nesterov = true;   // SGD only, when the recipe uses it
  std::string save;       // training checkpoint (safetensors) written after each epoch and every save_every steps
  int64_t save_every = 0; // steps between checkpoints within an epoch; 0: at the end of each epoch only
  std::string resume;     // training checkpoint to continue from
  std::string load;       // safetensors weights read before training
  uint64_t seed = 0;
  bool progress = true;       // the bar is also off when stdout is not a terminal
  double min_accuracy = 0.0;  // exit code 2 when the final accuracy is below (smoke tests)
  bool detect_anomaly = false;  // check every op's output and gradient for inf/NaN (autograd/anomaly_mode.h)
  MemoryOptions memory;       // --memory-report, --memory-trace, --memory-limit

  // RunFlags with train's "unset" markers: batch 0, optimizer and device empty, threads 0.
  static RunFlags unset_run_flags();
};

struct TrainSummary {
  double final_accuracy = 0.0;  // on the test set (synthetic data: the training set), after the last epoch, in eval mode
  double final_loss = 0.0;      // mean training loss of the last epoch
  double seconds = 0.0;
  nlohmann::ordered_json report;  // what --json prints
};

// Registers the `train` subcommand, filling `options` when parsed.
CLI::App* add_train_command(CLI::App& app, TrainOptions& options);
// Fills the unset fields of `options` from models::default_recipe(options.run.model).
TrainOptions with_recipe(TrainOptions options);
// Runs the training and prints to `out` (a table, or JSON with options.json).
TrainSummary run_train(const TrainOptions& options, std::ostream& out);
// run_train, then the exit code: 0, or 2 when the accuracy is below options.min_accuracy.
int train_command(const TrainOptions& options, std::ostream& out);

}  // namespace ember::apps
