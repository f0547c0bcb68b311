#pragma once
// DataLoaderOptions: how a DataLoader (data/data_loader.h) batches, orders, transforms and
// delivers its samples.
//
//   auto options = ember::data::DataLoaderOptions().batch_size(64).shuffle(true).workers(1).drop_last(true);
//   options.transforms().normalize({0.5f}, {0.25f});
//   options.batch_size();   // 64
#include <cstdint>
#include <utility>

#include "core/device.h"
#include "data/sampler.h"
#include "data/transforms.h"

namespace ember::data {

// Chainable, as in libtorch: DataLoaderOptions().batch_size(64).shuffle(true).drop_last(true).
// Each name reads the value without an argument and sets it with one.
class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  explicit DataLoaderOptions(int64_t batch_size) : batch_size_(batch_size) {}

  DataLoaderOptions& batch_size(int64_t b) { batch_size_ = b; return *this; }
  DataLoaderOptions& shuffle(bool s) { shuffle_ = s; return *this; }
  DataLoaderOptions& seed(uint64_t s) { seed_ = s; return *this; }
  DataLoaderOptions& drop_last(bool d) { drop_last_ = d; return *this; }
  DataLoaderOptions& device(Device d) { device_ = d; return *this; }
  DataLoaderOptions& prefetch(bool p) { prefetch_ = p; return *this; }
  DataLoaderOptions& prefetch_batches(int64_t n) { prefetch_batches_ = n; return *this; }
  DataLoaderOptions& transforms(Transforms t) { transforms_ = std::move(t); return *this; }
  // Background threads that assemble batches: 0 (on the caller's thread) or 1 (prefetch).
  DataLoaderOptions& workers(int64_t n);
  // Data-parallel training: this loader yields rank `rank` of `ranks`'s part of each epoch
  // (data/sampler.h's shard_of, PyTorch's DistributedSampler): the same seed on every rank
  // shuffles the same way, and the ranks' parts are disjoint, padded to equal sizes by
  // repeating samples (ShardEnds::drop: cut to equal sizes; ShardEnds::uneven, for evaluation:
  // every sample once, the parts differing by one).
  DataLoaderOptions& shard(int64_t rank, int64_t ranks, ShardEnds ends = ShardEnds::pad) {
    shard_rank_ = rank;
    shard_ranks_ = ranks;
    shard_ends_ = ends;
    return *this;
  }

  int64_t batch_size() const { return batch_size_; }
  bool shuffle() const { return shuffle_; }
  uint64_t seed() const { return seed_; }
  bool drop_last() const { return drop_last_; }
  Device device() const { return device_; }
  bool prefetch() const { return prefetch_; }
  int64_t prefetch_batches() const { return prefetch_batches_; }
  int64_t workers() const { return prefetch_ ? 1 : 0; }
  int64_t shard_rank() const { return shard_rank_; }
  int64_t shard_ranks() const { return shard_ranks_; }
  ShardEnds shard_ends() const { return shard_ends_; }
  const Transforms& transforms() const { return transforms_; }
  Transforms& transforms() { return transforms_; }  // options.transforms().normalize(...)

 private:
  int64_t batch_size_ = 64;
  bool shuffle_ = false;
  uint64_t seed_ = 0;              // shuffling and random transforms depend on (seed, epoch) only
  bool drop_last_ = false;         // skip the last batch when it is smaller than batch_size
  Device device_ = kCPU;           // where batches are delivered
  bool prefetch_ = true;           // prepare batches on a background thread
  Transforms transforms_;          // applied to every sample, then normalised to f32 (Dataset only)
  int64_t prefetch_batches_ = 2;   // prepared batches that may wait, >= 1
  int64_t shard_rank_ = 0;         // this loader's part of each epoch, of shard_ranks_
  int64_t shard_ranks_ = 1;
  ShardEnds shard_ends_ = ShardEnds::pad;
};

}  // namespace ember::data
