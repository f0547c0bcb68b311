// Property test: 100k random allocate/free operations against invariants.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "memory/caching_allocator.h"
#include "tests/support/fake_backend.h"

using namespace ember;

TEST_CASE("100k random operations keep blocks disjoint and stats exact", "[caching][property]") {
  auto owned = std::make_unique<test::FakeBackend>(size_t{1} << 40);
  test::FakeBackend* backend = owned.get();
  CachingAllocator cache(std::move(owned));
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> log_size(0.0, std::log2(64.0 * 1024 * 1024));
  std::uniform_int_distribution<int> stream_pick(0, 2);

  std::vector<Buffer> live;
  int64_t shadow_allocated = 0;  // rounded request bytes
  int64_t shadow_requested = 0;
  constexpr int kOperations = 100000;
  for (int op = 0; op < kOperations; ++op) {
    const bool allocate = live.empty() || (live.size() < 300 && rng() % 2 == 0);
    if (allocate) {
      AllocationRequest r;
      r.bytes = static_cast<size_t>(std::exp2(log_size(rng)));
      r.stream = reinterpret_cast<StreamHandle>(static_cast<uintptr_t>(stream_pick(rng)));
      live.push_back(cache.allocate(r));
      shadow_allocated += static_cast<int64_t>((r.bytes + 511) / 512 * 512);
      shadow_requested += static_cast<int64_t>(r.bytes);
    } else {
      const size_t i = rng() % live.size();
      shadow_allocated -= static_cast<int64_t>((live[i].bytes() + 511) / 512 * 512);
      shadow_requested -= static_cast<int64_t>(live[i].bytes());
      std::swap(live[i], live.back());
      live.pop_back();
    }
    if (op % 997 == 0 || op == kOperations - 1) {
      std::map<uintptr_t, uintptr_t> ranges;  // start -> end of each live block
      for (const Buffer& b : live) ranges[reinterpret_cast<uintptr_t>(b.data())] = reinterpret_cast<uintptr_t>(b.data()) + b.bytes();
      REQUIRE(ranges.size() == live.size());
      uintptr_t previous_end = 0;
      for (const auto& [start, end] : ranges) {
        REQUIRE(start >= previous_end);
        previous_end = end;
      }
      const MemoryStats s = cache.stats();
      // A large block keeps a tail of up to 1 MiB rather than split it off, and
      // allocated_bytes counts whole blocks (as PyTorch does).
      int64_t large_blocks = 0;
      for (const Buffer& b : live) large_blocks += b.bytes() > kSmallRequestBytes ? 1 : 0;
      REQUIRE(s.allocated_bytes.current >= shadow_allocated);
      REQUIRE(s.allocated_bytes.current <= shadow_allocated + large_blocks * static_cast<int64_t>(kSmallRequestBytes));
      REQUIRE(s.requested_bytes.current == shadow_requested);
      REQUIRE(s.allocation_count.current == static_cast<int64_t>(live.size()));
      REQUIRE(s.reserved_bytes.current >= s.allocated_bytes.current);
      REQUIRE(s.reserved_bytes.current == static_cast<int64_t>(backend->in_use()));
      // inactive split pieces are free bytes of reserved segments (kept up to date locally)
      REQUIRE(s.inactive_split_bytes.current >= 0);
      REQUIRE(s.inactive_split_count.current >= 0);
      REQUIRE(s.inactive_split_bytes.current <= s.reserved_bytes.current - s.allocated_bytes.current);
      REQUIRE((s.inactive_split_bytes.current == 0) == (s.inactive_split_count.current == 0));
    }
  }
  live.clear();
  cache.empty_cache();
  const MemoryStats s = cache.stats();
  CHECK(s.allocated_bytes.current == 0);
  CHECK(s.reserved_bytes.current == 0);
  CHECK(s.inactive_split_bytes.current == 0);
  CHECK(backend->in_use() == 0);
  CHECK(backend->frees() == backend->mallocs());
  CHECK(backend->bad_frees() == 0);
  CHECK(s.cache_hits > kOperations / 4);
}
