// FaultInjectingBackend: refuses exactly the backend mallocs it was told to, and both
// allocators turn a refusal into their out-of-memory road (the caching allocator's retry
// rungs first), leaving their statistics consistent.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "memory/caching_allocator.h"
#include "memory/direct_allocator.h"
#include "memory/fault_injection.h"
#include "memory/out_of_memory.h"
#include "tests/support/byte_units.h"
#include "tests/support/fake_backend.h"

using namespace ember;
using test::kKiB;
using test::kMiB;

namespace {

struct Faulty {
  Faulty() {
    auto fake = std::make_unique<test::FakeBackend>(size_t{1} << 30);
    backend = fake.get();
    auto owned = std::make_unique<FaultInjectingBackend>(std::move(fake));
    faults = owned.get();
    wrapper = std::move(owned);
  }
  // Which of n mallocs of 1 KiB the wrapper refused (1-based).
  std::vector<int> refused_of(int n) {
    std::vector<int> refused;
    for (int i = 1; i <= n; ++i) {
      void* p = wrapper->malloc(kKiB);
      if (p == nullptr) refused.push_back(i);
      else wrapper->free(p, kKiB);
    }
    return refused;
  }
  test::FakeBackend* backend;
  FaultInjectingBackend* faults;
  std::unique_ptr<RawBackend> wrapper;
};

Buffer allocate(DeviceAllocator& allocator, size_t bytes) {
  AllocationRequest r;
  r.bytes = bytes;
  r.category = MemoryCategory::activation;
  return allocator.allocate(r);
}

}  // namespace

TEST_CASE("fault injection refuses the mallocs it was told to, counting from when it was armed", "[fault]") {
  Faulty f;
  CHECK(f.refused_of(3).empty());
  f.faults->fail_once(2);
  CHECK(f.refused_of(5) == std::vector<int>{2});
  f.faults->fail_from(3);
  CHECK(f.refused_of(5) == std::vector<int>{3, 4, 5});
  f.faults->fail_every(2);
  CHECK(f.refused_of(6) == std::vector<int>{2, 4, 6});
  f.faults->lift();
  CHECK(f.refused_of(3).empty());
  CHECK(f.faults->mallocs() == 22);
  CHECK(f.faults->refusals() == 7);
  CHECK(f.backend->mallocs() == 15);  // refused calls never reach the wrapped backend
  CHECK(f.faults->live_bytes() == 0);
  CHECK_THROWS_AS(f.faults->fail_from(0), Error);
}

TEST_CASE("a refused segment goes down the caching allocator's ladder", "[fault][caching]") {
  Faulty f;
  FaultInjectingBackend& faults = *f.faults;
  CachingAllocator cache(std::move(f.wrapper));
  Buffer keep = allocate(cache, 4 * kKiB);
  {
    Buffer cached = allocate(cache, 3 * kMiB);  // a 20 MiB segment, cached once freed
  }
  SECTION("a single refusal: freeing the cache and retrying gets past it") {
    faults.fail_once(1);
    Buffer b = allocate(cache, 30 * kMiB);
    const MemoryStats s = cache.stats();
    CHECK(s.retries == 1);
    CHECK(s.ooms == 0);
    CHECK(s.reserved_bytes.current == static_cast<int64_t>(2 * kMiB + 30 * kMiB));  // the 20 MiB one went
  }
  SECTION("refusals from then on: OutOfMemoryError, and the allocator stays consistent") {
    const MemoryStats before = cache.stats();
    faults.fail_from(1);
    CHECK_THROWS_AS(allocate(cache, 30 * kMiB), OutOfMemoryError);
    CHECK(faults.refusals() == 2);  // the first try and the retry; 30 MiB has no own-size rung
    const MemoryStats s = cache.stats();
    CHECK(s.ooms == 1);
    CHECK(s.allocated_bytes.current == before.allocated_bytes.current);
    CHECK(s.reserved_bytes.current == static_cast<int64_t>(faults.live_bytes()));
    Buffer from_cache = allocate(cache, 8 * kKiB);  // what needs no new segment still works
    faults.lift();
    Buffer b = allocate(cache, 30 * kMiB);
    CHECK(cache.stats().reserved_bytes.current == static_cast<int64_t>(faults.live_bytes()));
  }
}

TEST_CASE("a refused malloc is an OutOfMemoryError from the direct allocator", "[fault]") {
  Faulty f;
  FaultInjectingBackend& faults = *f.faults;
  DirectAllocator direct(std::move(f.wrapper));
  Buffer keep = allocate(direct, 4 * kKiB);
  faults.fail_once(1);
  CHECK_THROWS_AS(allocate(direct, 4 * kKiB), OutOfMemoryError);
  Buffer b = allocate(direct, 4 * kKiB);
  const MemoryStats s = direct.stats();
  CHECK(s.ooms == 1);
  CHECK(s.allocation_count.current == 2);
  CHECK(s.reserved_bytes.current == static_cast<int64_t>(faults.live_bytes()));
}

TEST_CASE("a fault written as text (EMBER_FAULT_INJECTION) arms the same way, and bad text is refused", "[fault]") {
  Faulty f;
  f.faults->arm("every:3", "EMBER_FAULT_INJECTION");
  CHECK(f.refused_of(6) == std::vector<int>{3, 6});
  f.faults->arm("from:2", "EMBER_FAULT_INJECTION");
  CHECK(f.refused_of(3) == std::vector<int>{2, 3});
  f.faults->arm("once:1", "EMBER_FAULT_INJECTION");
  CHECK(f.refused_of(2) == std::vector<int>{1});
  for (const char* bad : {"", "from", "from:", "from:0", "from:-1", "from:2x", "sometimes:3", "every:99999999999999999999"}) {
    INFO("'" << bad << "'");
    try {
      f.faults->arm(bad, "EMBER_FAULT_INJECTION");
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("EMBER_FAULT_INJECTION='" + std::string(bad) + "': expected from:K") !=
            std::string::npos);
    }
  }
}
