#pragma once
// The data sets `ember train` and `ember eval` name with --data, and their loaders (the
// recipes are models/recipe.h's, the optimizers optim/make_optimizer.h's).
//
//   ember::apps::TrainData d = ember::apps::load_train_data("fashion-mnist", "", {});
//   ember::data::DataLoader loader(d.train, ember::apps::loader_options(d, 64, true, seed, ember::kCPU));
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/data_loader.h"
#include "data/dataset.h"
#include "data/synthetic.h"

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

}  // namespace ember::apps
