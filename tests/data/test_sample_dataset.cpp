// SampleDataset (data/sample_dataset.h) through the DataLoader: a dataset made from a lambda,
// shuffled and batched with drop_last, every sample once per epoch, map() transforms,
// chainable DataLoaderOptions, data memory, and the errors of a sample that does not fit.
#include <algorithm>
#include <numeric>
#include <vector>

#include "data/data_loader.h"
#include "data/sample_dataset.h"
#include "kernels/factories.h"
#include "memory/memory.h"
#include "tests/data/same_batches.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;
using namespace ember::data;
using test::expect_error_contains;

namespace {

// Sample i: x = (i, -i / 2) f32 [2], label i, so a batch tells which samples it holds.
std::shared_ptr<const SampleDataset> points(int64_t n) {
  return lambda_dataset(n, [](int64_t i) {
    const float x = static_cast<float>(i);
    return Sample{from_vector<float>({x, -x / 2}, {2}), i};
  });
}

// Every batch's labels of one epoch, checking each image against its label.
std::vector<std::vector<int64_t>> epoch_batches(DataLoader& loader, double image_scale = 1.0) {
  std::vector<std::vector<int64_t>> batches;
  for (Batch& b : loader) {
    const std::vector<int64_t> labels = b.labels.to_vector<int64_t>();
    const std::vector<float> images = b.images.to_vector<float>();
    REQUIRE(b.images.shape() == Shape{b.size(), 2});
    for (size_t k = 0; k < labels.size(); ++k) {  // whole numbers and halves: exact
      CHECK(images[2 * k] == image_scale * static_cast<double>(labels[k]));
      CHECK(images[2 * k + 1] == -image_scale * static_cast<double>(labels[k]) / 2);
    }
    batches.push_back(labels);
  }
  return batches;
}

std::vector<int64_t> sorted_flat(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<int64_t> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

TEST_CASE("a lambda dataset through the loader: every sample once per epoch, shuffled", "[data][sample_dataset]") {
  DataLoader loader(points(10), DataLoaderOptions().batch_size(3).shuffle(true).seed(5).workers(1));
  CHECK(loader.size() == 10);
  CHECK(loader.batches_per_epoch() == 4);
  const auto epoch0 = epoch_batches(loader);
  const auto epoch1 = epoch_batches(loader);
  REQUIRE(epoch0.size() == 4);
  CHECK(epoch0.back().size() == 1);  // 10 = 3 + 3 + 3 + 1
  std::vector<int64_t> all(10);
  std::iota(all.begin(), all.end(), int64_t{0});
  CHECK(sorted_flat(epoch0) == all);
  CHECK(sorted_flat(epoch1) == all);
  CHECK(epoch0 != epoch1);  // another order each epoch
  CHECK(epoch0.front() != std::vector<int64_t>{0, 1, 2});
}

TEST_CASE("drop_last skips the short batch, and no background thread gives the same batches", "[data][sample_dataset]") {
  const auto options = DataLoaderOptions().batch_size(4).shuffle(true).seed(9).drop_last(true);
  DataLoader threaded(points(10), options);
  DataLoader inline_loader(points(10), DataLoaderOptions(options).workers(0));
  CHECK(threaded.options().workers() == 1);
  CHECK(inline_loader.options().workers() == 0);
  for (int epoch = 0; epoch < 2; ++epoch) {
    const auto batches = epoch_batches(threaded);
    REQUIRE(batches.size() == 2);  // 10 / 4, the last 2 samples skipped
    for (const auto& b : batches) CHECK(b.size() == 4);
    const std::vector<int64_t> seen = sorted_flat(batches);
    CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());  // none twice
    CHECK(batches == epoch_batches(inline_loader));
  }
}

TEST_CASE("map applies a transform to every sample", "[data][sample_dataset]") {
  const auto doubled = map(points(7), [](Sample s) {
    s.image = s.image * 2.0;
    return s;
  });
  CHECK(doubled->size() == 7);
  CHECK(doubled->get(3).image.to_vector<float>() == std::vector<float>{6.0f, -3.0f});
  DataLoader loader(doubled, DataLoaderOptions().batch_size(2).shuffle(true));
  const auto batches = epoch_batches(loader, 2.0);
  CHECK(sorted_flat(batches).size() == 7);
}

TEST_CASE("SampleDataset batches are data memory", "[data][sample_dataset]") {
  DataLoader loader(points(10), DataLoaderOptions().batch_size(4).workers(0));
  const auto data_bytes = [] { return memory_stats(kCPU).by_category[static_cast<size_t>(MemoryCategory::data)].allocated; };
  const int64_t before = data_bytes();
  loader.start_epoch(0);
  Batch b;
  REQUIRE(loader.next(b));
  CHECK(data_bytes() - before >= static_cast<int64_t>(b.images.nbytes() + b.labels.nbytes()));
}

TEST_CASE("SampleDataset errors name the sample and the rule", "[data][sample_dataset][errors]") {
  const auto ragged = lambda_dataset(4, [](int64_t i) { return Sample{zeros({i == 2 ? 3 : 2}), 0}; });
  DataLoader loader(ragged, DataLoaderOptions().batch_size(4));
  loader.start_epoch(0);
  Batch b;
  expect_error_contains([&] { loader.next(b); }, {"sample 2", "[2]", "sample 0's"});
  const auto negative = lambda_dataset(2, [](int64_t i) { return Sample{zeros({1}), -i}; });
  DataLoader bad_labels(negative, DataLoaderOptions().batch_size(2).workers(0));
  bad_labels.start_epoch(0);
  expect_error_contains([&] { bad_labels.next(b); }, {"sample 1", "label -1"});
  DataLoaderOptions normalized;
  normalized.transforms().normalize({0.5f}, {0.5f});
  expect_error_contains([&] { DataLoader(points(3), normalized); }, {"data::map"});
  expect_error_contains([&] { DataLoader(points(0), DataLoaderOptions()); }, {"empty"});
  expect_error_contains([] { DataLoaderOptions().workers(2); }, {"workers", "0", "1", "got 2"});
}

EMBER_CUDA_TEST_CASE("a CUDA loader over a SampleDataset delivers the CPU loader's batches", "[data][sample_dataset]") {
  const auto options = DataLoaderOptions().batch_size(3).shuffle(true).seed(2);
  for (int64_t workers : {0, 1}) {
    DataLoader cpu(points(11), DataLoaderOptions(options).workers(workers));
    DataLoader gpu(points(11), DataLoaderOptions(options).workers(workers).device(kCUDA));
    test::expect_same_batches(cpu, gpu, 2);
  }
}
