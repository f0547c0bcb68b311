#include "data/data_loader.h"

#include <algorithm>
#include <cstring>

#include "core/cuda_runtime.h"
#include "core/error.h"
#include "data/pinned_buffer.h"
#include "data/prefetcher.h"
#include "data/sampler.h"
#include "memory/scopes.h"
#include "memory/allocation_observer.h"
#include "memory/empty.h"

namespace ember::data {
namespace {

constexpr size_t kLabelAlignBytes = alignof(int64_t);

// A staging buffer holds a batch's images, then its labels (aligned), then its targets if any.
size_t labels_offset(size_t image_bytes) {
  return (image_bytes + kLabelAlignBytes - 1) / kLabelAlignBytes * kLabelAlignBytes;
}
size_t targets_offset(size_t image_bytes, int64_t count) {
  return labels_offset(image_bytes) + static_cast<size_t>(count) * sizeof(int64_t);
}

int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t size : sizes) n *= size;
  return n;
}

// [count, one's sizes...]
Shape batched(int64_t count, std::vector<int64_t> one) {
  one.insert(one.begin(), count);
  return Shape(one);
}

}  // namespace

DataLoader::DataLoader(Dataset dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  check_dataset(dataset_, "DataLoader");
  size_ = dataset_.size();
  sample_shape_ = {dataset_.channels(), dataset_.height(), dataset_.width()};
  check_options();
  check_transforms(options_.transforms(), dataset_.channels(), "DataLoader");
  make_staging_buffers();
}

DataLoader::DataLoader(std::shared_ptr<const SampleDataset> dataset, DataLoaderOptions options)
    : samples_(std::move(dataset)), options_(std::move(options)) {
  EMBER_CHECK(samples_ != nullptr, "DataLoader: no dataset");
  size_ = samples_->size();
  EMBER_CHECK(size_ > 0, "DataLoader: the dataset is empty");
  check_options();
  EMBER_CHECK(!options_.transforms().is_random() && options_.transforms().mean.empty(),
              "DataLoader: options.transforms() apply to an in-memory Dataset only; transform a SampleDataset "
              "with data::map");
  const Sample first = samples_->get(0);
  EMBER_CHECK(first.image.defined(), "DataLoader: sample 0 has no image");
  sample_shape_ = first.image.sizes();
  has_targets_ = first.target.defined();
  if (has_targets_) target_shape_ = first.target.sizes();
  make_staging_buffers();
}

void DataLoader::check_options() const {
  EMBER_CHECK(options_.batch_size() > 0, "DataLoader: batch_size " << options_.batch_size() << " must be > 0");
  EMBER_CHECK(options_.shard_ranks() >= 1 && options_.shard_rank() >= 0 && options_.shard_rank() < options_.shard_ranks(),
              "DataLoader: shard rank " << options_.shard_rank() << " of " << options_.shard_ranks()
                                        << " ranks: need 0 <= rank < ranks");
  EMBER_CHECK(options_.prefetch_batches() >= 1,
              "DataLoader: prefetch_batches " << options_.prefetch_batches() << " must be >= 1");
  cuda::check_device(options_.device(), "DataLoader");
}

void DataLoader::make_staging_buffers() {
  if (!options_.device().is_cuda()) return;
  // Enough staging buffers that the prefetch thread never refills one the consumer
  // still copies from (see the invariant in data/prefetcher.h).
  const int64_t buffers = options_.prefetch() ? options_.prefetch_batches() + 1 : 1;
  const int64_t batch = options_.batch_size();
  const size_t image_bytes = static_cast<size_t>(batch * numel_of(sample_shape_)) * sizeof(float);
  const size_t target_bytes = has_targets_ ? static_cast<size_t>(batch * numel_of(target_shape_)) * sizeof(float) : 0;
  for (int64_t i = 0; i < buffers; ++i)
    staging_.emplace_back(targets_offset(image_bytes, batch) + target_bytes, options_.device());
  copy_stream_ = cuda::Stream::create(options_.device());
}

DataLoader::~DataLoader() { prefetcher_.reset(); }

int64_t DataLoader::epoch_size() const {
  return options_.shard_ranks() == 1 ? size_ : shard_size(size_, options_.shard_ranks(), options_.shard_ends(), options_.shard_rank());
}

int64_t DataLoader::batches_per_epoch() const {
  const int64_t n = epoch_size(), b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

std::vector<int64_t> DataLoader::sample_order(int64_t epoch) const {
  std::vector<int64_t> order = epoch_order(size_, options_.shuffle(), options_.seed(), epoch);
  if (options_.shard_ranks() == 1) return order;
  return shard_of(order, options_.shard_rank(), options_.shard_ranks(), options_.shard_ends());
}

void DataLoader::start_epoch(int64_t epoch, int64_t first_batch) {
  EMBER_CHECK(epoch >= 0, "DataLoader: epoch " << epoch << " must be >= 0");
  EMBER_CHECK(first_batch >= 0 && first_batch <= batches_per_epoch(),
              "DataLoader: first batch " << first_batch << " of epoch " << epoch << " is outside 0.."
                                         << batches_per_epoch() << " (the batches per epoch)");
  prefetcher_.reset();  // joins the thread of the epoch in progress before order_ changes
  epoch_ = epoch;
  order_ = sample_order(epoch);
  transform_state_ = transform_state(options_.seed(), epoch, size_);
  next_batch_ = first_batch;
  if (options_.prefetch())
    prefetcher_ = std::make_unique<Prefetcher>(batches_per_epoch() - first_batch, options_.prefetch_batches(),
                                               [this, first_batch](int64_t k) { return make_host_batch(first_batch + k); });
}

bool DataLoader::next(Batch& batch) {
  EMBER_CHECK(epoch_ >= 0, "DataLoader::next: no epoch started (call start_epoch or iterate with for)");
  Batch host;
  if (prefetcher_) {
    if (!prefetcher_->pop(host)) return false;
  } else {
    if (next_batch_ >= batches_per_epoch()) return false;
    host = make_host_batch(next_batch_++);
  }
  batch = options_.device().is_cuda() ? to_device(std::move(host)) : std::move(host);
  return true;
}

DataLoader::Iterator DataLoader::begin() {
  start_epoch(next_epoch_++, next_first_batch_);
  next_first_batch_ = 0;
  return Iterator(this);
}

DataLoader::Iterator DataLoader::end() { return Iterator(); }

Batch DataLoader::make_host_batch(int64_t k) {
  CategoryScope scope(MemoryCategory::data);
  PhaseScope phase(Phase::data);
  const int64_t first = k * options_.batch_size();
  const int64_t count = std::min(options_.batch_size(), epoch_size() - first);
  const Shape image_shape = batched(count, sample_shape_);
  Batch batch;
  batch.index = k;
  if (options_.device().is_cuda()) {
    PinnedBuffer& staging = staging_[static_cast<size_t>(k) % staging_.size()];
    staging.wait_copies();  // the copy of the batch that used it last must be done
    batch.images = staging.view(image_shape, DType::f32);
    batch.labels = staging.view(Shape{count}, DType::i64, labels_offset(batch.images.nbytes()));
    if (has_targets_)
      batch.targets = staging.view(batched(count, target_shape_), DType::f32, targets_offset(batch.images.nbytes(), count));
  } else {
    batch.images = empty(image_shape, DType::f32);
    batch.labels = empty(Shape{count}, DType::i64);
    if (has_targets_) batch.targets = empty(batched(count, target_shape_), DType::f32);
  }
  const int64_t* indices = order_.data() + first;
  if (samples_) {
    gather_samples(indices, count, batch);
    return batch;
  }
  if (count > 0)
    transform_batch(options_.transforms(), dataset_.images, indices, count, transform_state_,
                    batch.images.data<float>());
  const int64_t* labels = dataset_.labels.data<int64_t>();
  int64_t* out = batch.labels.data<int64_t>();
  for (int64_t i = 0; i < count; ++i) out[i] = labels[indices[i]];
  return batch;
}

void DataLoader::gather_samples(const int64_t* indices, int64_t count, Batch& batch) const {
  const Shape sample_shape(sample_shape_);
  const size_t sample_bytes = static_cast<size_t>(sample_shape.numel()) * sizeof(float);
  auto* images = static_cast<uint8_t*>(batch.images.data_ptr());
  int64_t* labels = batch.labels.data<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    const Sample sample = samples_->get(indices[i]);
    const Tensor& image = sample.image;
    EMBER_CHECK(image.defined() && image.dtype() == DType::f32 && image.device().is_cpu() &&
                    image.shape() == sample_shape,
                "DataLoader: sample " << indices[i] << " must be an f32 CPU tensor of shape " << sample_shape
                                      << " (sample 0's), got " << (image.defined() ? image.str() : "undefined"));
    EMBER_CHECK(sample.label >= 0, "DataLoader: sample " << indices[i] << " has label " << sample.label
                                                        << ", labels must be >= 0");
    if (has_targets_) {
      const Tensor& target = sample.target;
      EMBER_CHECK(target.defined() && target.dtype() == DType::f32 && target.device().is_cpu() &&
                      target.sizes() == target_shape_,
                  "DataLoader: sample " << indices[i] << "'s target must be an f32 CPU tensor of shape "
                                        << Shape(target_shape_) << " (sample 0's), got "
                                        << (target.defined() ? target.str() : "undefined"));
      const size_t target_bytes = target.nbytes();
      std::memcpy(static_cast<uint8_t*>(batch.targets.data_ptr()) + static_cast<size_t>(i) * target_bytes,
                  target.data_ptr(), target_bytes);
    }
    std::memcpy(images + static_cast<size_t>(i) * sample_bytes, image.data_ptr(), sample_bytes);
    labels[i] = sample.label;
  }
}

// The copy runs on the loader's own stream, into tensors allocated for it, so it overlaps the
// kernels already queued on the consumer's stream; the consumer's stream then waits for it (an
// event: no host wait), and the batch's bytes are marked as used there, so the copy stream does
// not reuse them before the consumer's kernels are done.
Batch DataLoader::to_device(Batch host) {
  CategoryScope scope(MemoryCategory::data);
  PhaseScope phase(Phase::data);
  PinnedBuffer& staging = staging_[static_cast<size_t>(host.index) % staging_.size()];
  const cuda::Stream consumer = cuda::current_stream(options_.device());
  Batch batch;
  batch.index = host.index;
  {
    cuda::StreamGuard on_copy_stream(copy_stream_);
    batch.images = empty(host.images.shape(), TensorOptions().dtype(DType::f32).device(options_.device()));
    batch.labels = empty(host.labels.shape(), TensorOptions().dtype(DType::i64).device(options_.device()));
    staging.copy_to_device_async(batch.images, 0);
    staging.copy_to_device_async(batch.labels, labels_offset(host.images.nbytes()));
    if (host.targets.defined()) {
      batch.targets = empty(host.targets.shape(), TensorOptions().dtype(DType::f32).device(options_.device()));
      staging.copy_to_device_async(batch.targets, targets_offset(host.images.nbytes(), host.size()));
    }
  }
  copied_.record(copy_stream_);
  consumer.wait(copied_);
  cuda::record_stream(batch.images, consumer);
  cuda::record_stream(batch.labels, consumer);
  cuda::record_stream(batch.targets, consumer);
  return batch;
}

}  // namespace ember::data
