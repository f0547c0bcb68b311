#pragma once
// What `ember train`, `ember eval` and `ember bench-train` share: the datasets,
// the per-model default recipe and the optimizer factory (weight files: train/weights_file.h).
//
//   ember::apps::TrainData d = ember::apps::load_train_data("fashion-mnist", "", {});
//   ember::apps::Recipe r = ember::apps::default_recipe("lenet5");   // SGD nesterov, onecycle, 2 epochs
//   auto opt = ember::apps::make_optimizer("sgd", model->parameters(), r.lr, r.momentum, r.nesterov, 0.0);
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/data_loader.h"
#include "data/dataset.h"
#include "data/synthetic.h"
#include "models/module.h"
#include "optim/optimizer.h"

namespace ember::apps {

// Names accepted by --data: fashion-mnist (from --data-dir) or a synthetic set.
std::vector<std::string> data_names();

struct TrainData {
  data::Dataset train;
  data::Dataset test;  // synthetic data has no held-out split: the training set again
  std::vector<float> mean, std;  // per-channel normalisation (empty: none)
};

// `dir` empty means the default folder (data::kFashionMnistDir).
TrainData load_train_data(const std::string& name, const std::string& dir, const data::SyntheticOptions& synthetic);
data::DataLoaderOptions loader_options(const TrainData& data, int64_t batch, bool shuffle, uint64_t seed,
                                       Device device);
// Shape of one sample ([C, H, W] or [features]).
Shape sample_shape(const data::Dataset& dataset);

// A model's default training recipe: what reaches docs/results.md's accuracies.
struct Recipe {
  std::string optimizer;  // sgd | adam | adamw
  double lr;
  double momentum;
  bool nesterov;
  double weight_decay;
  std::string schedule;   // optim::make_schedule name
  int epochs;
  int64_t batch;
};
Recipe default_recipe(const std::string& model);

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name, std::vector<Tensor> params, double lr,
                                                 double momentum, bool nesterov, double weight_decay);

}  // namespace ember::apps
