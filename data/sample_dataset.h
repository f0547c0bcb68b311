#pragma once
// SampleDataset: a dataset you write yourself, one sample at a time (libtorch's
// Dataset::get/size). The in-memory data::Dataset struct of the readers stays the fast
// path; a SampleDataset feeds the same prefetching DataLoader, which gathers samples
// into batches on its background thread.
//
//   // 1000 points of a 2-D regression-like toy set: x = (i, i / 2), label i % 3
//   auto points = ember::data::lambda_dataset(1000, [](int64_t i) {
//     return ember::data::Sample{ember::from_vector<float>({float(i), i / 2.0f}, {2}), i % 3};
//   });
//   auto scaled = ember::data::map(points, [](ember::data::Sample s) {
//     s.image = s.image * 0.01;   // any per-sample transform
//     return s;
//   });
//   ember::data::DataLoader loader(scaled, ember::data::DataLoaderOptions().batch_size(64).shuffle(true));
//   for (ember::data::Batch& b : loader) ...   // b.images [64, 2] f32, b.labels [64] i64
//
// Every sample must be an f32 tensor on the CPU of one shape (the loader reads sample 0
// to learn it), and so must every target if sample 0 has one; labels are >= 0. get() runs on the loader's background thread (never
// two calls at once), so it must not touch what the training thread changes.
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "core/tensor.h"

namespace ember::data {

struct Sample {
  Sample() = default;
  // `return {image, label};` as a classifier's get() writes it, without -Wextra's missing-initializer warning.
  Sample(Tensor image_, int64_t label_, Tensor target_ = Tensor())
      : image(std::move(image_)), label(label_), target(std::move(target_)) {}

  Tensor image;       // one sample's input, e.g. [C, H, W] f32 on the CPU
  int64_t label = 0;  // its class, >= 0
  Tensor target;      // optional: what a regression predicts (f32 on the CPU, one shape for every sample);
                      // the batches then carry them as Batch::targets, and Batch::target() returns those
};

class SampleDataset {
 public:
  virtual ~SampleDataset() = default;
  virtual int64_t size() const = 0;
  virtual Sample get(int64_t index) const = 0;  // index in 0..size()-1
};

// The dataset whose sample i is make(i).
std::shared_ptr<const SampleDataset> lambda_dataset(int64_t size, std::function<Sample(int64_t)> make);

// The dataset whose sample i is transform(dataset's sample i).
std::shared_ptr<const SampleDataset> map(std::shared_ptr<const SampleDataset> dataset,
                                         std::function<Sample(Sample)> transform);

}  // namespace ember::data
