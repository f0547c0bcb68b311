#include "apps/train_setup.h"

#include "core/error.h"
#include "data/fashion_mnist.h"

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

}  // namespace ember::apps
