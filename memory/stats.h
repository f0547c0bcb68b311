#pragma once
// Memory statistics, plain data with PyTorch's names so numbers can be compared
// with torch.cuda.memory_stats(). Every Stat is {current, peak, allocated, freed}:
// for a *_bytes stat they are SUMs of bytes, for a *_count stat COUNTs of blocks.
#include <array>
#include <cstdint>
#include <string>

#include "core/allocator.h"

namespace ember {

struct Stat {
  int64_t current = 0;    // live now
  int64_t peak = 0;       // highest `current` since the last reset_peak
  int64_t allocated = 0;  // cumulative increases
  int64_t freed = 0;      // cumulative decreases

  void increase(int64_t amount) {
    current += amount;
    allocated += amount;
    if (current > peak) peak = current;
  }
  void decrease(int64_t amount) {
    current -= amount;
    freed += amount;
  }
  void reset_peak() { peak = current; }
};

struct MemoryStats {
  Stat allocated_bytes;       // SUM: bytes handed out to tensors (after rounding)
  Stat reserved_bytes;        // SUM: bytes held from the backend (segments)
  Stat active_bytes;          // SUM: allocated + split remainders not yet free
  Stat inactive_split_bytes;  // SUM: free pieces of split segments
  Stat requested_bytes;       // SUM: bytes asked for (before rounding)
  Stat allocation_count;      // COUNT: live blocks handed out
  Stat active_count;          // COUNT: blocks allocated or still in use on another stream
  Stat inactive_split_count;  // COUNT: free pieces of split segments
  Stat segment_count;         // COUNT: live backend segments
  std::array<Stat, kNumMemoryCategories> by_category{};  // SUM: allocated bytes per category
  std::array<Stat, 2> allocated_by_pool{};  // SUM: [0] small pool (<= 1 MiB requests), [1] large pool
  std::array<Stat, 2> reserved_by_pool{};   // SUM: segments of each pool

  int64_t backend_allocations = 0;  // COUNT: calls into cudaMalloc / the host backend
  int64_t backend_frees = 0;        // COUNT
  int64_t cache_hits = 0;           // COUNT: requests served from the cache
  int64_t retries = 0;              // COUNT: allocations retried after freeing cached segments
  int64_t ooms = 0;                 // COUNT: OutOfMemoryError thrown

  void reset_peaks();

  // The bookkeeping every allocator does, in one place (called under the allocator's lock).
  // pool: 0 small (requests <= 1 MiB), 1 large.
  void add_segment(int64_t bytes, int pool);     // reserved from the backend
  void remove_segment(int64_t bytes, int pool);  // returned to it
  // A block handed to a tensor (`bytes` as the allocator counts it, `requested` as asked) and
  // its return; a block is active from add_block until remove_active (the caching allocator
  // keeps it active while another stream may still use it).
  void add_block(int64_t bytes, int64_t requested, MemoryCategory category, int pool);
  void remove_block(int64_t bytes, int64_t requested, MemoryCategory category, int pool);
  void remove_active(int64_t bytes);
  void move_category(int64_t bytes, MemoryCategory from, MemoryCategory to);
};

// The pool a request of `bytes` belongs to (0 small, 1 large), PyTorch's 1 MiB boundary.
inline constexpr size_t kSmallRequestBytes = size_t{1} << 20;
inline int pool_of(size_t bytes) { return bytes <= kSmallRequestBytes ? 0 : 1; }

// A table of the statistics, for people.
std::string format_memory_stats(const MemoryStats& stats, const std::string& title);
std::string format_bytes(int64_t bytes);  // "1.50 MiB"

}  // namespace ember
