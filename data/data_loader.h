#pragma once
// DataLoader: batches of a Dataset, shuffled, transformed and normalised, moved
// to the training device, prepared ahead on a background thread.
//
//   using namespace ember::data;
//   DataLoaderOptions options = DataLoaderOptions().batch_size(128).shuffle(true).seed(42).device(ember::kCUDA);
//   options.transforms().normalize({kFashionMnistMean}, {kFashionMnistStd});
//   DataLoader loader(load_fashion_mnist(kFashionMnistDir, Split::train), options);
//   for (int epoch = 0; epoch < 10; ++epoch)
//     for (Batch& batch : loader)             // each loop is the next epoch: 0, 1, 2, ...
//       train_step(batch.images, batch.labels);   // [B, 1, 28, 28] f32, [B] i64
//
// Guarantees: every sample appears exactly once per epoch (the last batch is
// smaller unless drop_last, which skips it); the order and the random transforms
// depend only on (seed, epoch), so prefetch on or off, and every run, give the same
// batches; an exception on the prefetch thread is rethrown by next(); destroying
// the loader mid-epoch stops and joins the thread.
//
// A dataset written as a SampleDataset (data/sample_dataset.h: size(), get(i)) goes through
// the same loader with the same guarantees; its samples are gathered into batches on the
// background thread, and its transforms are the dataset's own (map()), not options.transforms().
//
// Memory: batch tensors are allocated under CategoryScope(MemoryCategory::data).
// On a CUDA device each batch is written into a pinned (page-locked) staging
// buffer and copied with cudaMemcpyAsync on a stream of the loader's own
// (core/cuda_stream.h), so the copy overlaps the kernels of the step before;
// the caller's current stream waits for the copy before anything it queues next.
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

#include "core/cuda_stream.h"
#include "core/generator.h"
#include "data/batch.h"
#include "data/dataset.h"
#include "data/sample_dataset.h"
#include "data/data_loader_options.h"

namespace ember::data {

class PinnedBuffer;
class Prefetcher;

class DataLoader {
 public:
  DataLoader(Dataset dataset, DataLoaderOptions options);
  // Reads sample 0 to learn the samples' shape; throws when the dataset is empty.
  DataLoader(std::shared_ptr<const SampleDataset> dataset, DataLoaderOptions options);
  ~DataLoader();  // stops and joins the prefetch thread; never throws
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Starts `epoch` at its batch `first_batch` (a resumed run skips what it trained), abandoning
  // the epoch in progress. The batches are the same as when the epoch starts at 0.
  void start_epoch(int64_t epoch, int64_t first_batch = 0);
  // The next batch of the current epoch into `batch`; false at its end.
  bool next(Batch& batch);

  // Range-for: begin() starts the next epoch (0 first, then one more per loop;
  // set_next_epoch() chooses, and where the next loop starts), then yields its batches.
  class Iterator;
  Iterator begin();
  Iterator end();
  void set_next_epoch(int64_t epoch, int64_t first_batch = 0) {
    next_epoch_ = epoch;
    next_first_batch_ = first_batch;
  }
  int64_t epoch() const { return epoch_; }  // the epoch in progress (or last started); -1 before any

  int64_t batches_per_epoch() const;
  // Samples an epoch visits: the dataset's, or with options.shard() this rank's part.
  int64_t epoch_size() const;
  // The order in which `epoch` visits the dataset's samples (before drop_last; this rank's part
  // when sharded).
  std::vector<int64_t> sample_order(int64_t epoch) const;
  const Dataset& dataset() const { return dataset_; }  // empty for a loader over a SampleDataset
  int64_t size() const { return size_; }              // samples in the dataset
  const DataLoaderOptions& options() const { return options_; }

 private:
  Batch make_host_batch(int64_t k);   // runs on the prefetch thread when prefetching
  Batch to_device(Batch host);         // issues the async copy on the caller's thread
  void check_options() const;
  void make_staging_buffers();
  void gather_samples(const int64_t* indices, int64_t count, Batch& batch) const;  // SampleDataset path

  Dataset dataset_;                               // the in-memory path
  std::shared_ptr<const SampleDataset> samples_;  // or the SampleDataset path
  int64_t size_ = 0;
  std::vector<int64_t> sample_shape_;  // one sample's, without the batch dimension
  std::vector<int64_t> target_shape_;  // one target's (SampleDataset samples with a target)
  bool has_targets_ = false;
  DataLoaderOptions options_;
  int64_t epoch_ = -1;
  int64_t next_epoch_ = 0;
  int64_t next_first_batch_ = 0;       // of the next begin() only
  int64_t next_batch_ = 0;             // without prefetch
  std::vector<int64_t> order_;         // of the epoch in progress; read by the prefetch thread
  GeneratorState transform_state_;
  std::vector<PinnedBuffer> staging_;  // CUDA only: batch k uses staging_[k % size]
  cuda::Stream copy_stream_;           // CUDA only: where the batches' copies run
  cuda::Event copied_;                 // CUDA only: recorded after each batch's copies
  std::unique_ptr<Prefetcher> prefetcher_;  // last: destroyed (joined) before what it reads
};

class DataLoader::Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Batch;
  using difference_type = std::ptrdiff_t;
  using pointer = Batch*;
  using reference = Batch&;

  Iterator() = default;  // the end
  explicit Iterator(DataLoader* loader) : loader_(loader) { ++*this; }
  Batch& operator*() { return batch_; }
  Batch* operator->() { return &batch_; }
  Iterator& operator++() {
    if (!loader_->next(batch_)) loader_ = nullptr;
    return *this;
  }
  bool operator==(const Iterator& o) const { return loader_ == o.loader_; }
  bool operator!=(const Iterator& o) const { return loader_ != o.loader_; }

 private:
  DataLoader* loader_ = nullptr;
  Batch batch_;
};

}  // namespace ember::data
