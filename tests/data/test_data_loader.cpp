#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <set>

#include "core/cuda_runtime.h"
#include "data/data_loader.h"
#include "data/fashion_mnist.h"
#include "data/prefetcher.h"
#include "data/sampler.h"
#include "memory/memory.h"
#include "tests/support/error_bound.h"
#include "tests/data/same_batches.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;
using namespace ember::data;
using test::expect_error_contains;

namespace {

// n images [C, H, W] whose every pixel is (its index * 5 + pixel position) % 256, and
// label = index, so a batch tells exactly which samples it holds.
Dataset indexed_dataset(int64_t n, int64_t channels = 1, int64_t height = 2, int64_t width = 3) {
  Tensor images = empty(Shape{n, channels, height, width}, DType::u8);
  uint8_t* p = images.data<uint8_t>();
  const int64_t per_image = channels * height * width;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < per_image; ++k) p[i * per_image + k] = static_cast<uint8_t>((i * 5 + k) % 256);
  std::vector<int64_t> labels(static_cast<size_t>(n));
  std::iota(labels.begin(), labels.end(), int64_t{0});
  return make_dataset("indexed", images, from_vector<int64_t>(labels, Shape{n}), n);
}

DataLoaderOptions options_with(int64_t batch_size, bool shuffle, uint64_t seed = 7) {
  return DataLoaderOptions().batch_size(batch_size).shuffle(shuffle).seed(seed);
}

// The labels (= sample indices) of every batch of one epoch, in order.
std::vector<int64_t> epoch_labels(DataLoader& loader) {
  std::vector<int64_t> all;
  for (Batch& b : loader) {
    const std::vector<int64_t> l = b.labels.to_vector<int64_t>();
    all.insert(all.end(), l.begin(), l.end());
  }
  return all;
}

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<int64_t> iota_vector(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

}  // namespace

TEST_CASE("batches have the right shapes and dtypes, the last one is smaller", "[data]") {
  DataLoader loader(indexed_dataset(10), options_with(4, false));
  CHECK(loader.batches_per_epoch() == 3);
  std::vector<int64_t> sizes;
  for (Batch& b : loader) {
    CHECK(b.images.dtype() == DType::f32);
    CHECK(b.labels.dtype() == DType::i64);
    CHECK(b.images.shape() == Shape{b.size(), 1, 2, 3});
    CHECK(b.labels.shape() == Shape{b.size()});
    CHECK(b.index == static_cast<int64_t>(sizes.size()));
    sizes.push_back(b.size());
  }
  CHECK(sizes == std::vector<int64_t>{4, 4, 2});
}

TEST_CASE("every sample appears exactly once per epoch, with and without shuffle", "[data]") {
  for (bool shuffle : {false, true}) {
    INFO("shuffle " << shuffle);
    DataLoader loader(indexed_dataset(23), options_with(5, shuffle));
    for (int epoch = 0; epoch < 3; ++epoch) {
      const std::vector<int64_t> labels = epoch_labels(loader);
      CHECK(sorted(labels) == iota_vector(23));
      CHECK(labels == loader.sample_order(epoch));
      if (!shuffle) CHECK(labels == iota_vector(23));
    }
    CHECK(loader.epoch() == 2);
  }
}

TEST_CASE("drop_last skips the smaller last batch", "[data]") {
  DataLoaderOptions o = options_with(4, true);
  o.drop_last(true);
  DataLoader loader(indexed_dataset(10), o);
  CHECK(loader.batches_per_epoch() == 2);
  const std::vector<int64_t> labels = epoch_labels(loader);
  CHECK(labels.size() == 8);
  CHECK(std::set<int64_t>(labels.begin(), labels.end()).size() == 8);  // no repeats
  const std::vector<int64_t> order = loader.sample_order(0);
  CHECK(labels == std::vector<int64_t>(order.begin(), order.begin() + 8));
  // Exactly divisible: nothing is dropped.
  DataLoader even(indexed_dataset(8), o);
  CHECK(sorted(epoch_labels(even)) == iota_vector(8));
}

TEST_CASE("the shuffle order depends only on seed and epoch", "[data]") {
  DataLoader a(indexed_dataset(50), options_with(8, true, 123));
  DataLoader b(indexed_dataset(50), options_with(8, true, 123));
  DataLoader other_seed(indexed_dataset(50), options_with(8, true, 124));
  const std::vector<int64_t> a0 = epoch_labels(a), a1 = epoch_labels(a);
  CHECK(a0 == epoch_labels(b));
  CHECK(a1 == epoch_labels(b));
  CHECK(a0 != a1);                          // a new epoch, a new order
  CHECK(a0 != epoch_labels(other_seed));    // a new seed, a new order
  CHECK(a0 != iota_vector(50));
  // A resumed run can jump to epoch 1 directly.
  DataLoader resumed(indexed_dataset(50), options_with(8, true, 123));
  resumed.set_next_epoch(1);
  CHECK(epoch_labels(resumed) == a1);
  CHECK(epoch_order(50, true, 123, 1) == a1);
}

TEST_CASE("pixels are scaled to [0, 1] and normalised per channel", "[data]") {
  DataLoaderOptions o = options_with(3, false);
  o.transforms().normalize({0.5f, 0.25f}, {0.25f, 2.0f});
  const int64_t plane = 7 * 9;  // more pixels than a vector holds, and a tail
  DataLoader loader(indexed_dataset(3, 2, 7, 9), o);
  loader.start_epoch(0);
  Batch b;
  REQUIRE(loader.next(b));
  const std::vector<float> v = b.images.to_vector<float>();
  // x * scale + bias in f32 (data/transforms.cpp), scale = (1/255) / std and bias = -mean / std
  // rounded to f32 (exact for these means and stds, counted anyway): 4 roundings, each of a term
  // below |x scale| + |bias| <= 2 (1 + |expected|) (|bias| <= 2).
  const double u = test::unit_roundoff(kFloat32);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t k = 0; k < plane; ++k) {
        const double pixel = static_cast<double>((i * 5 + c * plane + k) % 256);
        const double expected = c == 0 ? (pixel / 255 - 0.5) / 0.25 : (pixel / 255 - 0.25) / 2.0;
        INFO("sample " << i << " channel " << c << " pixel " << k);
        const double got = v[static_cast<size_t>((i * 2 + c) * plane + k)];
        CHECK(std::fabs(got - expected) <= 2 * 4 * u * (1 + std::fabs(expected)));
      }
  CHECK_FALSE(loader.next(b));

  // Without normalize: u8 / 255; f32 images pass through unchanged.
  Tensor raw = apply_transforms(Transforms(), indexed_dataset(2).images, {1});
  CHECK(std::fabs(raw.to_vector<float>()[2] - 7.0 / 255) <= 2 * u * 7.0 / 255);  // 1/255's rounding and the product's
  Tensor f = from_vector<float>({-1.5f, 2.0f}, {2, 1, 1, 1});
  CHECK(apply_transforms(Transforms(), f, {1, 0}).to_vector<float>() == std::vector<float>{2.0f, -1.5f});
}

TEST_CASE("random crop and flip match a reference and are deterministic per state", "[data]") {
  // One 4x5 image per sample with distinct pixels 1..20 (0 marks padding); a padding of 6
  // exceeds the image, so some crops hold no pixel at all.
  const int64_t n = 64, h = 4, w = 5, pad = GENERATE(2, 6);
  Tensor images = empty(Shape{n, 1, h, w}, DType::u8);
  for (int64_t i = 0; i < n * h * w; ++i) images.data<uint8_t>()[i] = static_cast<uint8_t>(i % (h * w) + 1);
  const Transforms t = Transforms().random_crop(pad).random_horizontal_flip();
  const GeneratorState state{99, 1000};
  std::vector<int64_t> all = iota_vector(n);
  const std::vector<float> out = apply_transforms(t, images, all, state).to_vector<float>();
  CHECK(apply_transforms(t, images, all, state).to_vector<float>() == out);  // same state, same result
  CHECK(apply_transforms(t, images, all, GeneratorState{99, 2000}).to_vector<float>() != out);

  std::set<int64_t> tops, lefts;
  int flips = 0;
  for (int64_t i = 0; i < n; ++i) {
    const SampleAugmentation a = draw_augmentation(t, state, i);
    REQUIRE(a.top >= 0);
    REQUIRE(a.top <= 2 * pad);
    REQUIRE(a.left >= 0);
    REQUIRE(a.left <= 2 * pad);
    tops.insert(a.top);
    lefts.insert(a.left);
    flips += a.flip;
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {  // crop of the zero-padded image, then mirror
        const int64_t cx = a.flip ? w - 1 - x : x;
        const int64_t sy = y + a.top - pad, sx = cx + a.left - pad;
        const bool padding = sy < 0 || sy >= h || sx < 0 || sx >= w;
        const double expected = padding ? 0.0 : static_cast<double>(sy * w + sx + 1) / 255;
        INFO("sample " << i << " y " << y << " x " << x << " top " << a.top << " left " << a.left << " flip " << a.flip);
        // pixel * (1/255 rounded to f32): two roundings of the result; padding is an exact 0
        REQUIRE(std::fabs(out[static_cast<size_t>((i * h + y) * w + x)] - expected) <=
                2 * test::unit_roundoff(kFloat32) * expected);
      }
  }
  if (pad == 2) {  // 64 draws reach every offset (odds of missing one ~ 5 * 0.8^64)
    CHECK(static_cast<int64_t>(tops.size()) == 2 * pad + 1);
    CHECK(static_cast<int64_t>(lefts.size()) == 2 * pad + 1);
  }
  CHECK(flips > 10);
  CHECK(flips < 54);

  // A sample's augmentation does not depend on which batch or position it lands in.
  const std::vector<float> single = apply_transforms(t, images, {37}, state).to_vector<float>();
  CHECK(single == std::vector<float>(out.begin() + 37 * h * w, out.begin() + 38 * h * w));
}

TEST_CASE("prefetch on and off give identical batches", "[data]") {
  DataLoaderOptions o = options_with(7, true, 5);
  o.transforms().random_crop(1).random_horizontal_flip().normalize({0.3f}, {0.2f});
  Dataset d = indexed_dataset(40, 1, 6, 6);
  DataLoaderOptions sync = o, deep = o;
  sync.prefetch(false);
  deep.prefetch_batches(1);
  DataLoader a(d, o), b(d, sync), c(d, deep);
  for (int epoch = 0; epoch < 2; ++epoch) {
    a.start_epoch(epoch);
    b.start_epoch(epoch);
    c.start_epoch(epoch);
    Batch x, y, z;
    int64_t count = 0;
    while (a.next(x)) {
      REQUIRE(b.next(y));
      REQUIRE(c.next(z));
      CHECK(x.images.to_vector<float>() == y.images.to_vector<float>());
      CHECK(x.images.to_vector<float>() == z.images.to_vector<float>());
      CHECK(x.labels.to_vector<int64_t>() == y.labels.to_vector<int64_t>());
      ++count;
    }
    CHECK_FALSE(b.next(y));
    CHECK(count == 6);
  }
}

TEST_CASE("an exception on the prefetch thread is rethrown to the consumer", "[data]") {
  Prefetcher p(5, 2, [](int64_t k) {
    if (k == 2) throw Error("batch 2: disk on fire");
    Batch b;
    b.index = k;
    return b;
  });
  Batch b;
  REQUIRE(p.pop(b));
  CHECK(b.index == 0);
  REQUIRE(p.pop(b));
  CHECK(b.index == 1);
  expect_error_contains([&] { p.pop(b); }, {"batch 2", "disk on fire"});
  CHECK_FALSE(p.pop(b));
}

TEST_CASE("destroying a loader mid-epoch stops its thread without hanging", "[data]") {
  Dataset d = indexed_dataset(2000, 3, 8, 8);
  const auto start = std::chrono::steady_clock::now();
  {
    DataLoader loader(d, options_with(10, true));
    loader.start_epoch(0);
    Batch b;
    REQUIRE(loader.next(b));  // the thread is now blocked on a full queue
  }
  {
    DataLoader loader(d, options_with(10, true));
    loader.start_epoch(0);  // destroyed before anything was taken
  }
  {
    DataLoader loader(d, options_with(10, true));
    loader.start_epoch(0);
    Batch b;
    REQUIRE(loader.next(b));
    loader.start_epoch(3);  // abandons epoch 0
    REQUIRE(loader.next(b));
    const std::vector<int64_t> order = loader.sample_order(3);
    CHECK(b.labels.to_vector<int64_t>() == std::vector<int64_t>(order.begin(), order.begin() + 10));
  }
  // Reaching here is the test; the bound only catches a thread that finished the
  // whole epoch instead of stopping (generous: timings are not asserted otherwise).
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("batches are allocated as data memory", "[data]") {
  DataLoader loader(indexed_dataset(10), options_with(4, false));
  const int64_t before = memory_stats(kCPU).by_category[static_cast<size_t>(MemoryCategory::data)].allocated;
  loader.start_epoch(0);
  Batch b;
  REQUIRE(loader.next(b));
  const int64_t after = memory_stats(kCPU).by_category[static_cast<size_t>(MemoryCategory::data)].allocated;
  CHECK(after - before >= static_cast<int64_t>(b.images.nbytes() + b.labels.nbytes()));
}

TEST_CASE("a loader over the committed Fashion-MNIST subset normalises to the expected mean", "[data]") {
  Dataset d = load_fashion_mnist(std::string(EMBER_TEST_DATA_DIR) + "/fashion-mnist-subset", Split::train);
  double pixel_sum = 0;
  for (uint8_t p : d.images.to_vector<uint8_t>()) pixel_sum += p;
  const double pixel_mean = pixel_sum / static_cast<double>(d.images.numel()) / 255.0;  // 0.2839 on this subset
  DataLoaderOptions o = options_with(128, true);
  o.transforms().normalize({kFashionMnistMean}, {kFashionMnistStd});
  DataLoader loader(d, o);
  double sum = 0, sum_abs = 0;
  int64_t count = 0;
  for (Batch& b : loader) {
    for (float v : b.images.to_vector<float>()) sum += v, sum_abs += std::fabs(v);
    count += b.images.numel();
  }
  CHECK(count == 2000 * 28 * 28);
  // Each pixel is p * scale + bias in f32, scale = (1/255) / std and bias = -mean / std rounded to
  // f32: the same roundings for every pixel, so they need not average out: 2 units of p * scale,
  // 1 of bias, then the product's and the sum's, all of terms below p scale + |bias|; their mean
  // is (pixel_mean + mean) / std. The test's own fp64 sum of 1.5M values adds gamma(n) in f64.
  const double mean = static_cast<double>(kFashionMnistMean), stddev = static_cast<double>(kFashionMnistStd);
  const double bound = 4 * test::unit_roundoff(kFloat32) * (pixel_mean + mean) / stddev +
                       test::gamma(count, kFloat64) * sum_abs / static_cast<double>(count);
  CHECK(std::fabs(sum / static_cast<double>(count) - (pixel_mean - mean) / stddev) <= bound);
}

TEST_CASE("DataLoader option errors are clear", "[data]") {
  Dataset d = indexed_dataset(4, 3, 2, 2);
  DataLoaderOptions o = options_with(0, false);
  expect_error_contains([&] { DataLoader(d, o); }, {"DataLoader", "batch_size 0"});
  o = options_with(2, false);
  o.transforms().normalize({0.5f, 0.5f}, {0.5f, 0.5f});
  expect_error_contains([&] { DataLoader(d, o); }, {"normalize", "2 channel means", "3 channels"});
  o.transforms().normalize({0.5f}, {0.0f});
  expect_error_contains([&] { DataLoader(d, o); }, {"standard deviation 0"});
  // A sample index outside the data set is refused before any image is read, wherever it stands.
  expect_error_contains([] { apply_transforms(Transforms(), indexed_dataset(8).images, {0, 1, 2, 3, 4, 5, 8}); },
                        {"transforms", "sample index 8", "0..7"});
  expect_error_contains([] { apply_transforms(Transforms(), indexed_dataset(8).images, {-1, 0}); },
                        {"sample index -1"});
  o = options_with(2, false);
  o.prefetch_batches(0);
  expect_error_contains([&] { DataLoader(d, o); }, {"prefetch_batches 0"});
  DataLoader fresh(d, options_with(2, false));
  Batch b;
  expect_error_contains([&] { fresh.next(b); }, {"no epoch started"});
  if (!cuda::is_available()) {
    o = options_with(2, false);
    o.device(kCUDA);
    expect_error_contains([&] { DataLoader(d, o); }, {"DataLoader", "cuda:0"});
  }
}

EMBER_CUDA_TEST_CASE("a CUDA loader delivers the CPU loader's batches", "[data]") {
  DataLoaderOptions o = options_with(16, true, 3);
  o.transforms().random_crop(2).random_horizontal_flip().normalize({0.5f}, {0.5f});
  Dataset d = indexed_dataset(100, 1, 8, 8);
  DataLoaderOptions on_gpu = o;
  on_gpu.device(kCUDA);
  for (bool prefetch : {true, false}) {
    on_gpu.prefetch(prefetch);
    DataLoader cpu(d, o), gpu(d, on_gpu);
    test::expect_same_batches(cpu, gpu, 2);
  }
}

TEST_CASE("an epoch started at batch k yields the same batches as the full epoch from k on", "[data]") {
  DataLoaderOptions o = options_with(7, true, 5);
  o.transforms().random_crop(1).random_horizontal_flip();
  const Dataset d = indexed_dataset(40, 1, 6, 6);
  for (bool prefetch : {true, false}) {
    INFO("prefetch " << prefetch);
    o.prefetch(prefetch);
    DataLoader full(d, o), resumed(d, o);
    full.start_epoch(3);
    std::vector<Batch> expected;
    for (Batch b; full.next(b);) expected.push_back(b);
    resumed.set_next_epoch(3, 4);
    size_t k = 4;
    for (Batch& b : resumed) {
      REQUIRE(k < expected.size());
      CHECK(b.index == expected[k].index);
      CHECK(b.images.to_vector<float>() == expected[k].images.to_vector<float>());
      CHECK(b.labels.to_vector<int64_t>() == expected[k].labels.to_vector<int64_t>());
      ++k;
    }
    CHECK(k == expected.size());
    CHECK(epoch_labels(resumed).size() == 40);  // the next loop is a whole epoch again
  }
  DataLoader loader(d, o);
  expect_error_contains([&] { loader.start_epoch(0, 7); }, {"first batch 7", "0..6"});
}

TEST_CASE("sharded loaders split every epoch between ranks as PyTorch's DistributedSampler does", "[data][shard]") {
  // PyTorch's rule: pad the shuffled order by repeating its start to a multiple of the ranks
  // (or cut it to one), then rank r takes positions r, r + ranks, r + 2 ranks, ...
  CHECK(shard_of({4, 0, 3, 1, 2}, 1, 2, ShardEnds::pad) == std::vector<int64_t>{0, 1, 4});
  CHECK(shard_of({4, 0, 3, 1, 2}, 0, 2, ShardEnds::pad) == std::vector<int64_t>{4, 3, 2});
  CHECK(shard_of({4, 0, 3, 1, 2}, 1, 2, ShardEnds::drop) == std::vector<int64_t>{0, 1});
  CHECK(shard_of({4, 0, 3, 1, 2}, 0, 2, ShardEnds::uneven) == std::vector<int64_t>{4, 3, 2});
  CHECK(shard_of({4, 0, 3, 1, 2}, 1, 2, ShardEnds::uneven) == std::vector<int64_t>{0, 1});
  CHECK(shard_of({7, 8}, 4, 5, ShardEnds::pad) == std::vector<int64_t>{7});  // more ranks than samples: repeats
  CHECK(shard_of({7, 8}, 4, 5, ShardEnds::uneven).empty());
  const Dataset d = indexed_dataset(10);
  for (int64_t ranks : {2, 3, 4}) {
    INFO(ranks << " ranks");
    for (ShardEnds ends : {ShardEnds::pad, ShardEnds::drop, ShardEnds::uneven}) {
      INFO("ends " << static_cast<int>(ends));
      std::multiset<int64_t> seen;  // over the ranks
      int64_t each = -1;
      for (int64_t rank = 0; rank < ranks; ++rank) {
        DataLoader loader(d, options_with(3, true).shard(rank, ranks, ends));
        const int64_t expected = ends == ShardEnds::pad    ? (10 + ranks - 1) / ranks
                                 : ends == ShardEnds::drop ? 10 / ranks
                                                           : 10 / ranks + (rank < 10 % ranks ? 1 : 0);
        CHECK(loader.epoch_size() == expected);
        loader.set_next_epoch(2);
        const std::vector<int64_t> mine = epoch_labels(loader);
        CHECK(mine == loader.sample_order(2));
        CHECK(static_cast<int64_t>(mine.size()) == expected);
        if (ends != ShardEnds::uneven && each >= 0) CHECK(static_cast<int64_t>(mine.size()) == each);  // equal parts
        each = static_cast<int64_t>(mine.size());
        seen.insert(mine.begin(), mine.end());
      }
      // pad: every sample once, and the padding's repeats; drop: no repeats; uneven: each sample exactly once.
      std::set<int64_t> distinct(seen.begin(), seen.end());
      if (ends == ShardEnds::pad) {
        CHECK(static_cast<int64_t>(distinct.size()) == 10);
        CHECK(static_cast<int64_t>(seen.size()) == ranks * each);
      } else {
        CHECK(distinct.size() == seen.size());
        CHECK(static_cast<int64_t>(seen.size()) == (ends == ShardEnds::drop ? 10 / ranks * ranks : 10));
      }
    }
  }
  expect_error_contains([&] { DataLoader(d, options_with(3, true).shard(2, 2)); }, {"shard rank 2 of 2"});
}
