#include "data/sample_dataset.h"

#include "core/error.h"

namespace ember::data {

namespace {

class LambdaDataset : public SampleDataset {
 public:
  LambdaDataset(int64_t size, std::function<Sample(int64_t)> make) : size_(size), make_(std::move(make)) {}
  int64_t size() const override { return size_; }
  Sample get(int64_t index) const override { return make_(index); }

 private:
  int64_t size_;
  std::function<Sample(int64_t)> make_;
};

class MappedDataset : public SampleDataset {
 public:
  MappedDataset(std::shared_ptr<const SampleDataset> inner, std::function<Sample(Sample)> transform)
      : inner_(std::move(inner)), transform_(std::move(transform)) {}
  int64_t size() const override { return inner_->size(); }
  Sample get(int64_t index) const override { return transform_(inner_->get(index)); }

 private:
  std::shared_ptr<const SampleDataset> inner_;
  std::function<Sample(Sample)> transform_;
};

}  // namespace

std::shared_ptr<const SampleDataset> lambda_dataset(int64_t size, std::function<Sample(int64_t)> make) {
  EMBER_CHECK(size >= 0, "lambda_dataset: size must be >= 0, got " << size);
  EMBER_CHECK(make != nullptr, "lambda_dataset: no function");
  return std::make_shared<LambdaDataset>(size, std::move(make));
}

std::shared_ptr<const SampleDataset> map(std::shared_ptr<const SampleDataset> dataset,
                                         std::function<Sample(Sample)> transform) {
  EMBER_CHECK(dataset != nullptr, "map: no dataset");
  EMBER_CHECK(transform != nullptr, "map: no transform");
  return std::make_shared<MappedDataset>(std::move(dataset), std::move(transform));
}

}  // namespace ember::data
