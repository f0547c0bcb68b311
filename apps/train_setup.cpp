#include "apps/train_setup.h"

#include "core/error.h"
#include "data/fashion_mnist.h"
#include "optim/adam.h"
#include "optim/sgd.h"

namespace ember::apps {

std::vector<std::string> data_names() { return {"fashion-mnist", "spirals", "blobs"}; }

TrainData load_train_data(const std::string& name, const std::string& dir, const data::SyntheticOptions& synthetic) {
  TrainData d;
  if (name == "fashion-mnist") {
    const std::string folder = dir.empty() ? data::kFashionMnistDir : dir;
    d.train = data::load_fashion_mnist(folder, data::Split::train);
    d.test = data::load_fashion_mnist(folder, data::Split::test);
    d.mean = {data::kFashionMnistMean};
    d.std = {data::kFashionMnistStd};
    return d;
  }
  d.train = data::make_synthetic(name, synthetic);
  d.test = d.train;
  return d;
}

data::DataLoaderOptions loader_options(const TrainData& data, int64_t batch, bool shuffle, uint64_t seed,
                                       Device device) {
  data::DataLoaderOptions o = data::DataLoaderOptions(batch).shuffle(shuffle).seed(seed).device(device);
  if (!data.mean.empty()) o.transforms().normalize(data.mean, data.std);
  return o;
}

Shape sample_shape(const data::Dataset& dataset) {
  std::vector<int64_t> sizes = dataset.images.sizes();
  sizes.erase(sizes.begin());
  return Shape(sizes);
}

Recipe default_recipe(const std::string& model) {
  // Nesterov SGD with a one-cycle schedule converges fast enough for the few-epoch targets of
  // docs/results.md; the MLP keeps the synthetic-data recipe it was tuned with.
  if (model == "lenet5") return {"sgd", 0.05, 0.9, true, 5e-4, "onecycle", 2, 64};
  if (model == "convnet") return {"sgd", 0.05, 0.9, true, 5e-4, "onecycle", 3, 128};
  if (model == "resnet20") return {"sgd", 0.1, 0.9, true, 5e-4, "onecycle", 5, 128};
  return {"sgd", 0.1, 0.9, false, 0.0, "cosine", 20, 64};
}

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name, std::vector<Tensor> params, double lr,
                                                 double momentum, bool nesterov, double weight_decay) {
  if (name == "sgd") {
    return std::make_unique<optim::SGD>(std::move(params), optim::SgdOptions(lr)
                                                               .momentum(momentum)
                                                               .nesterov(nesterov && momentum > 0.0)
                                                               .weight_decay(weight_decay));
  }
  if (name == "adam") return std::make_unique<optim::Adam>(std::move(params), optim::AdamOptions(lr).weight_decay(weight_decay));
  if (name == "adamw")
    return std::make_unique<optim::AdamW>(std::move(params), optim::AdamOptions(lr).weight_decay(weight_decay));
  EMBER_THROW("make_optimizer: unknown optimizer '" << name << "' (known: sgd, adam, adamw)");
}

}  // namespace ember::apps
