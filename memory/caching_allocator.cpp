// The caching allocator's policy, PyTorch's CUDA caching allocator in a tenth
// of the size:
//
// - Every request is rounded up to kMinBlockBytes (512 B).
// - Requests up to kSmallRequestBytes (1 MiB) are served from the small pool,
//   whose segments are kSmallSegmentBytes (2 MiB); larger ones from the large
//   pool: requests under kMinLargeAllocBytes (10 MiB) share kLargeSegmentBytes
//   (20 MiB) segments, bigger ones get a segment of their size rounded up to
//   kRoundLargeBytes (2 MiB). Keeping small blocks apart stops them from
//   fragmenting the big segments that activations need.
// - malloc is a ladder: (1) the best-fitting free block of the pool on the
//   request's stream (smallest that fits, then lowest address); (2) a fresh
//   segment from the backend; (3) wait for the blocks that are free but for
//   another stream's work (below), put them back in the pools and try (1)
//   again; (4) free every cached segment, retry (2) once; (5) for a request
//   that would share a 20 MiB segment, a segment of just its size rounded up
//   to 2 MiB; (6) OutOfMemoryError, its message built from the statistics.
//   Rung 5 is ours, not PyTorch's: on a device of a few dozen MiB (a
//   --memory-limit, a small budget) a 20 MiB segment is most of the memory,
//   and refusing a 1.5 MiB request with 10 MiB free is no answer (PyTorch's
//   is expandable segments). A backend that refuses (returns nullptr) for any
//   reason, memory/fault_injection.h's included, goes down the same rungs.
// - A block larger than needed is split: the remainder goes back to the pool
//   if it is at least 512 B (small pool) or more than 1 MiB (large pool; smaller
//   tails stay with the block rather than breed slivers).
// - free returns the block to its pool and merges it with free neighbours in
//   its segment. A block is reused only on the stream it was allocated on.
// - If record_stream() said other streams used it, free records an event on
//   each of them and the block stays out of the pools (still active) until all
//   have completed; every allocation polls them. Where an event cannot be
//   created or recorded, nothing is known about that stream's work, so the
//   block waits instead for a successful synchronize_stream() of it, which
//   only rung 3 and empty_cache() attempt (they block until the streams are
//   done); until then it is never reused, whatever it costs in held memory.
// - empty_cache() waits for those blocks too, then returns every entirely free
//   segment to the backend.
#include "memory/caching_allocator.h"

#include <algorithm>

#include "memory/allocation_checks.h"
#include "memory/allocation_observer.h"
#include "memory/out_of_memory.h"

namespace ember {

struct CachingAllocator::Block {
  enum class State { free, allocated, awaiting_events };
  char* ptr = nullptr;
  size_t size = 0;       // bytes of this block (rounded)
  size_t requested = 0;  // bytes the caller asked for
  StreamHandle stream = nullptr;
  bool small = false;
  State state = State::free;
  MemoryCategory category = MemoryCategory::temporary;
  Block* prev = nullptr;  // neighbours in the same segment, by address
  Block* next = nullptr;
  std::vector<StreamHandle> stream_uses;  // other streams that used it (record_stream)
  // From free on, one per stream in stream_uses: done once its event completes, or for a use
  // whose event could not be recorded, once that stream is synchronised.
  struct PendingUse {
    StreamHandle stream = nullptr;
    RawBackend::Event event = nullptr;
    bool recorded = false;
  };
  std::vector<PendingUse> pending_uses;

  bool whole_segment() const { return prev == nullptr && next == nullptr; }
};

namespace {

size_t round_size(size_t bytes) { return (bytes + kMinBlockBytes - 1) / kMinBlockBytes * kMinBlockBytes; }

size_t segment_size(size_t size) {
  if (size <= kSmallRequestBytes) return kSmallSegmentBytes;
  if (size < kMinLargeAllocBytes) return kLargeSegmentBytes;
  return (size + kRoundLargeBytes - 1) / kRoundLargeBytes * kRoundLargeBytes;
}

bool should_split(const CachingAllocator::Block& block, size_t size) {
  const size_t remaining = block.size - size;
  return block.small ? remaining >= kMinBlockBytes : remaining > kSmallRequestBytes;
}

}  // namespace

bool CachingAllocator::BlockOrder::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

CachingAllocator::CachingAllocator(std::unique_ptr<RawBackend> backend) : backend_(std::move(backend)) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_awaiting_blocks(/*wait=*/true);
  release_free_segments();
}

// Only a block and its neighbours can change what they count: free neighbours are always merged
// (no two free blocks lie side by side), so an allocation or a free touches no other free piece,
// and whether a piece's segment is split shows in its own links. A walk over the whole segment
// cost a few percent of a ResNet-20 step (segments of thousands of small blocks).
CachingAllocator::SplitFree CachingAllocator::split_free(const Block* block) const {
  SplitFree result;
  for (const Block* piece : {static_cast<const Block*>(block->prev), block, static_cast<const Block*>(block->next)}) {
    if (piece == nullptr || piece->state != Block::State::free || piece->whole_segment()) continue;
    result.bytes += static_cast<int64_t>(piece->size);
    ++result.count;
  }
  return result;
}

void CachingAllocator::update_split_stats(const SplitFree& before, const SplitFree& after) {
  auto apply = [](Stat& stat, int64_t delta) {
    if (delta > 0) stat.increase(delta);
    if (delta < 0) stat.decrease(-delta);
  };
  apply(stats_.inactive_split_bytes, after.bytes - before.bytes);
  apply(stats_.inactive_split_count, after.count - before.count);
}

size_t CachingAllocator::largest_free_locked() const {
  size_t largest = 0;
  for (const FreeSet* pool : {&small_free_, &large_free_})
    for (const Block* b : *pool) largest = std::max(largest, b->size);
  return largest;
}

CachingAllocator::Block* CachingAllocator::find_free_block(bool small, size_t size, StreamHandle stream) {
  FreeSet& pool = pool_for(small);
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  pool.erase(it);
  ++stats_.cache_hits;
  return block;
}

CachingAllocator::Block* CachingAllocator::reserve_segment(size_t segment_bytes, bool small, StreamHandle stream) {
  void* p = backend_->malloc(segment_bytes);
  if (p == nullptr) return nullptr;
  auto* block = new Block();
  block->ptr = static_cast<char*>(p);
  block->size = segment_bytes;
  block->stream = stream;
  block->small = small;
  stats_.add_segment(static_cast<int64_t>(segment_bytes), small ? 0 : 1);
  return block;
}

CachingAllocator::Block* CachingAllocator::split(Block* block, size_t size) {
  auto* rest = new Block();
  rest->ptr = block->ptr + size;
  rest->size = block->size - size;
  rest->stream = block->stream;
  rest->small = block->small;
  rest->prev = block;
  rest->next = block->next;
  if (block->next != nullptr) block->next->prev = rest;
  block->next = rest;
  block->size = size;
  pool_for(rest->small).insert(rest);
  return rest;
}

Buffer CachingAllocator::allocate(const AllocationRequest& request) {
  check_allocation_request(request);
  const size_t size = round_size(request.bytes);
  const bool small = size <= kSmallRequestBytes;
  const size_t segment = segment_size(size);

  std::lock_guard<std::mutex> lock(mutex_);
  release_awaiting_blocks(/*wait=*/false);
  // The ladder of the policy above: each rung runs only when the ones before found nothing.
  Block* block = find_free_block(small, size, request.stream);
  if (block == nullptr) block = reserve_segment(segment, small, request.stream);
  if (block == nullptr && release_awaiting_blocks(/*wait=*/true) > 0)
    block = find_free_block(small, size, request.stream);
  if (block == nullptr) {
    ++stats_.retries;
    release_free_segments();
    block = reserve_segment(segment, small, request.stream);
  }
  if (block == nullptr && segment == kLargeSegmentBytes)
    block = reserve_segment((size + kRoundLargeBytes - 1) / kRoundLargeBytes * kRoundLargeBytes, small, request.stream);
  if (block == nullptr) {
    ++stats_.ooms;
    throw OutOfMemoryError(out_of_memory_message(request, backend_->capacity(), stats_, largest_free_locked()),
                           request.bytes);
  }
  const SplitFree split_before = split_free(block);  // a fresh segment is unsplit: nothing
  if (should_split(*block, size)) split(block, size);
  block->state = Block::State::allocated;
  block->requested = request.bytes;
  block->category = request.category;
  update_split_stats(split_before, split_free(block));

  const auto n = static_cast<int64_t>(block->size);
  stats_.add_block(n, static_cast<int64_t>(request.bytes), request.category, small ? 0 : 1);
  allocated_[block->ptr] = block;
  notify_allocation_observer(true, block->ptr, n, request.category, &request, request.device, stats_);
  return Buffer(block->ptr, request.bytes, request, this);
}

void CachingAllocator::release(void* data, size_t /*bytes*/, Device device, MemoryCategory /*category*/,
                               StreamHandle /*stream*/) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocated_.find(data);
  if (it == allocated_.end()) return;
  Block* block = it->second;
  allocated_.erase(it);
  const auto n = static_cast<int64_t>(block->size);
  stats_.remove_block(n, static_cast<int64_t>(block->requested), block->category, block->small ? 0 : 1);
  notify_allocation_observer(false, block->ptr, n, block->category, nullptr, device, stats_);
  if (!block->stream_uses.empty()) {
    for (StreamHandle s : block->stream_uses) {
      Block::PendingUse use;
      use.stream = s;
      use.recorded = backend_->record_event(s, use.event);
      block->pending_uses.push_back(use);
    }
    block->stream_uses.clear();
    block->state = Block::State::awaiting_events;
    awaiting_events_.push_back(block);
    return;
  }
  free_block(block);
}

void CachingAllocator::free_block(Block* block) {
  const SplitFree split_before = split_free(block);
  FreeSet& pool = pool_for(block->small);
  block->state = Block::State::free;
  stats_.remove_active(static_cast<int64_t>(block->size));
  if (Block* prev = block->prev; prev != nullptr && prev->state == Block::State::free) {
    pool.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && next->state == Block::State::free) {
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    delete next;
  }
  pool.insert(block);
  update_split_stats(split_before, split_free(block));
}

// Puts back in the pools the awaiting blocks whose other streams are done with them, and
// returns how many. Without `wait` it only polls the events; with it, it blocks on each event,
// or on its whole stream where the event was never recorded or cannot be waited on. A block
// whose stream cannot be synchronised stays out of the pools.
size_t CachingAllocator::release_awaiting_blocks(bool wait) {
  std::vector<StreamHandle> synchronized;  // done with every use recorded before
  auto stream_done = [&](StreamHandle stream) {
    if (std::find(synchronized.begin(), synchronized.end(), stream) != synchronized.end()) return true;
    if (!backend_->synchronize_stream(stream)) return false;
    synchronized.push_back(stream);
    return true;
  };
  auto use_done = [&](const Block::PendingUse& use) {
    const bool done = wait ? (use.recorded && backend_->synchronize_event(use.event)) || stream_done(use.stream)
                           : use.recorded && backend_->event_done(use.event);
    if (done && use.recorded) backend_->destroy_event(use.event);
    return done;
  };
  auto block_done = [&](Block* block) {
    auto& uses = block->pending_uses;
    uses.erase(std::remove_if(uses.begin(), uses.end(), use_done), uses.end());
    if (!uses.empty()) return false;
    free_block(block);
    return true;
  };
  const size_t before = awaiting_events_.size();
  awaiting_events_.erase(std::remove_if(awaiting_events_.begin(), awaiting_events_.end(), block_done),
                         awaiting_events_.end());
  return before - awaiting_events_.size();
}

void CachingAllocator::release_free_segments() {
  for (FreeSet* pool : {&small_free_, &large_free_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* block = *it;
      if (!block->whole_segment()) {
        ++it;
        continue;
      }
      it = pool->erase(it);
      backend_->free(block->ptr, block->size);
      stats_.remove_segment(static_cast<int64_t>(block->size), block->small ? 0 : 1);
      delete block;
    }
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_awaiting_blocks(/*wait=*/true);
  release_free_segments();
}

void CachingAllocator::record_stream(const Buffer& buffer, StreamHandle stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocated_.find(buffer.data());
  EMBER_CHECK(it != allocated_.end(), "record_stream: the buffer was not allocated by " << name());
  Block* block = it->second;
  if (stream != block->stream &&
      std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) == block->stream_uses.end())
    block->stream_uses.push_back(stream);
}

void CachingAllocator::relabel(Buffer& buffer, MemoryCategory category) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocated_.find(buffer.data());
  EMBER_CHECK(it != allocated_.end(), "relabel: the buffer was not allocated by " << name());
  Block* block = it->second;
  const auto n = static_cast<int64_t>(block->size);
  notify_allocation_observer(false, block->ptr, n, block->category, nullptr, buffer.device(), stats_);
  stats_.move_category(n, block->category, category);
  block->category = category;
  notify_allocation_observer(true, block->ptr, n, category, nullptr, buffer.device(), stats_);
  set_buffer_category(buffer, category);
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_peaks();
}

size_t CachingAllocator::largest_free_block() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return largest_free_locked();
}

size_t CachingAllocator::free_block_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return small_free_.size() + large_free_.size();
}

}  // namespace ember
