#pragma once
// CachingAllocator: keeps freed blocks for reuse instead of returning them to
// the backend, so a training loop stops calling cudaMalloc (or the host
// allocator) after its first steps.
//
//   CachingAllocator cache(make_cuda_backend(0));
//   Buffer b = cache.allocate(request);   // from the cache if a block fits
//   cache.stats().cache_hits;             // memory/stats.h
//   cache.empty_cache();                  // give unused segments back
//
// The policy (constants and rules) is written at the top of caching_allocator.cpp.
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "memory/device_allocator.h"
#include "memory/raw_backend.h"

namespace ember {

// Sizes in bytes that define the policy (PyTorch's, so numbers compare).
inline constexpr size_t kMinBlockBytes = 512;                   // every request is rounded up to this
inline constexpr size_t kSmallSegmentBytes = 2 << 20;           // small pool segments: 2 MiB
inline constexpr size_t kLargeSegmentBytes = 20 << 20;          // large requests under 10 MiB share 20 MiB segments
inline constexpr size_t kMinLargeAllocBytes = 10 << 20;         // from 10 MiB, a segment is the request rounded...
inline constexpr size_t kRoundLargeBytes = 2 << 20;             // ...up to 2 MiB

class CachingAllocator final : public DeviceAllocator {
 public:
  explicit CachingAllocator(std::unique_ptr<RawBackend> backend);
  ~CachingAllocator() override;

  Buffer allocate(const AllocationRequest& request) override;
  void empty_cache() override;
  void record_stream(const Buffer& buffer, StreamHandle stream) override;
  void relabel(Buffer& buffer, MemoryCategory category) override;
  std::string name() const override { return "caching(" + backend_->name() + ")"; }
  MemoryStats stats() const override;
  void reset_peak_stats() override;

  RawBackend& backend() override { return *backend_; }
  size_t largest_free_block() const;
  // Blocks currently cached and free, for tests and the report.
  size_t free_block_count() const;

  struct Block;

 protected:
  void release(void* data, size_t bytes, Device device, MemoryCategory category,
               StreamHandle stream) noexcept override;

 private:
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const;
  };
  using FreeSet = std::set<Block*, BlockOrder>;

  Block* find_free_block(bool small, size_t size, StreamHandle stream);
  Block* reserve_segment(size_t segment_bytes, bool small, StreamHandle stream);
  Block* split(Block* block, size_t size);
  void free_block(Block* block);
  void release_free_segments();
  size_t release_awaiting_blocks(bool wait);
  // Free pieces of a split segment among `block` and its neighbours (all that an allocation or
  // a free can change): the inactive-split statistics move by after - before.
  struct SplitFree {
    int64_t bytes = 0;
    int64_t count = 0;
  };
  SplitFree split_free(const Block* block) const;
  void update_split_stats(const SplitFree& before, const SplitFree& after);
  size_t largest_free_locked() const;
  FreeSet& pool_for(bool small) { return small ? small_free_ : large_free_; }

  std::unique_ptr<RawBackend> backend_;
  mutable std::mutex mutex_;
  FreeSet small_free_;
  FreeSet large_free_;
  std::unordered_map<void*, Block*> allocated_;
  std::vector<Block*> awaiting_events_;  // freed, but maybe still in use on another stream
  MemoryStats stats_;
};

}  // namespace ember
