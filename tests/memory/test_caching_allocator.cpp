// Policy tests for the caching allocator over a fake backend with a fixed
// capacity: every rule of memory/caching_allocator.cpp's header comment.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "memory/caching_allocator.h"
#include "memory/out_of_memory.h"
#include "tests/support/byte_units.h"
#include "tests/support/fake_cache.h"

using namespace ember;
using test::kKiB;
using test::kMiB;
using test::stream_id;
using Fixture = test::FakeCache;

TEST_CASE("requests are rounded up to 512 bytes", "[caching]") {
  Fixture f;
  Buffer a = f.alloc(1);
  CHECK(f.cache->stats().allocated_bytes.current == 512);
  Buffer b = f.alloc(513);
  CHECK(f.cache->stats().allocated_bytes.current == 512 + 1024);
  CHECK(f.cache->stats().requested_bytes.current == 514);
  CHECK(b.bytes() == 513);
}

TEST_CASE("small and large pools reserve their own segment sizes", "[caching]") {
  Fixture f;
  SECTION("<= 1 MiB: a 2 MiB small-pool segment") {
    Buffer a = f.alloc(kMiB);
    CHECK(f.cache->stats().reserved_by_pool[0].current == static_cast<int64_t>(2 * kMiB));
    CHECK(f.cache->stats().reserved_by_pool[1].current == 0);
  }
  SECTION("1 MiB < size < 10 MiB: a 20 MiB large-pool segment") {
    Buffer a = f.alloc(kMiB + 1);
    CHECK(f.cache->stats().reserved_by_pool[1].current == static_cast<int64_t>(20 * kMiB));
    Buffer b = f.alloc(5 * kMiB);  // fits in the same segment
    CHECK(f.backend->mallocs() == 1);
  }
  SECTION(">= 10 MiB: the size rounded up to 2 MiB") {
    Buffer a = f.alloc(10 * kMiB);
    CHECK(f.cache->stats().reserved_bytes.current == static_cast<int64_t>(10 * kMiB));
    Buffer b = f.alloc(11 * kMiB);
    CHECK(f.cache->stats().reserved_bytes.current == static_cast<int64_t>(22 * kMiB));
  }
}

TEST_CASE("blocks split, merge with free neighbours, and are reused", "[caching]") {
  Fixture f;
  Buffer a = f.alloc(512 * kKiB);
  Buffer b = f.alloc(512 * kKiB);
  CHECK(f.backend->mallocs() == 1);  // both from one 2 MiB segment
  CHECK(static_cast<char*>(b.data()) == static_cast<char*>(a.data()) + 512 * kKiB);
  CHECK(f.cache->stats().inactive_split_bytes.current == static_cast<int64_t>(kMiB));
  a = Buffer();
  CHECK(f.cache->stats().inactive_split_bytes.current == static_cast<int64_t>(1536 * kKiB));
  CHECK(f.cache->free_block_count() == 2);  // a's block and the tail; b sits between
  b = Buffer();
  CHECK(f.cache->free_block_count() == 1);  // all three merged back into one segment
  CHECK(f.cache->stats().inactive_split_bytes.current == 0);
  Buffer c = f.alloc(kMiB);
  CHECK(f.backend->mallocs() == 1);
  CHECK(f.cache->stats().cache_hits == 2);  // b and c came from the cache
}

TEST_CASE("best fit: the smallest free block that fits", "[caching]") {
  Fixture f;
  Buffer big = f.alloc(1536 * kKiB);  // large pool, 20 MiB segment
  Buffer keep1 = f.alloc(2 * kMiB);
  Buffer mid = f.alloc(3 * kMiB);
  Buffer keep2 = f.alloc(2 * kMiB);
  void* mid_ptr = mid.data();
  big = Buffer();
  mid = Buffer();
  // Free blocks now: 1.5 MiB at the start, 3 MiB in the middle, the tail (~11.5 MiB).
  Buffer c = f.alloc(2560 * kKiB);  // 2.5 MiB: only the 3 MiB hole and the tail fit; the hole is smaller
  CHECK(c.data() == mid_ptr);
}

TEST_CASE("a failed reservation frees cached segments and retries once", "[caching]") {
  Fixture f(22 * kMiB);
  Buffer a = f.alloc(2 * kMiB, stream_id(1));  // 20 MiB segment on stream 1
  a = Buffer();                                // cached, unused
  Buffer b = f.alloc(2 * kMiB, stream_id(2));  // needs a new segment: only after freeing the cache
  CHECK(f.cache->stats().retries == 1);
  CHECK(f.backend->frees() == 1);
  CHECK(f.cache->stats().reserved_bytes.current == static_cast<int64_t>(20 * kMiB));
}

TEST_CASE("a request that cannot get its 20 MiB segment gets one of its own size rounded to 2 MiB", "[caching]") {
  Fixture f(16 * kMiB);
  Buffer keep = f.alloc(kMiB);                 // 2 MiB small-pool segment, cached after a retry would free nothing
  Buffer a = f.alloc(3 * kMiB);                // 20 MiB does not fit in the 14 MiB left: a 4 MiB segment
  CHECK(f.cache->stats().reserved_by_pool[1].current == static_cast<int64_t>(4 * kMiB));
  CHECK(f.cache->stats().ooms == 0);
  Buffer b = f.alloc(9 * kMiB);                // 10 MiB of the 10 MiB left
  CHECK(f.cache->stats().reserved_bytes.current == static_cast<int64_t>(16 * kMiB));
  CHECK_THROWS_AS(f.alloc(512 * kKiB + kMiB), OutOfMemoryError);  // nothing left at all: still an OOM
}

TEST_CASE("out of memory names the request, capacity, usage and remedies", "[caching][oom]") {
  Fixture f(8 * kMiB);
  Buffer keep = f.alloc(kMiB);
  Buffer spare = f.alloc(256 * kKiB);
  spare = Buffer();
  try {
    f.alloc(12 * kMiB, nullptr, MemoryCategory::activation);
    FAIL("expected OutOfMemoryError");
  } catch (const OutOfMemoryError& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK(e.requested_bytes() == 12 * kMiB);
    CHECK(m.find("12.00 MiB") != std::string::npos);
    CHECK(m.find("capacity 8.00 MiB") != std::string::npos);
    CHECK(m.find("allocated 1.00 MiB") != std::string::npos);
    CHECK(m.find("reserved but unused 1.00 MiB") != std::string::npos);
    CHECK(m.find("largest free block 1.00 MiB") != std::string::npos);
    CHECK(m.find("checkpointing") != std::string::npos);
    CHECK(m.find("accumulation") != std::string::npos);
    CHECK(m.find("fp16") != std::string::npos);
    // The advice names flags `ember train --help` has (tests/apps/test_cli.cpp checks they parse).
    CHECK(m.find("checkpoint = sqrt") != std::string::npos);
    CHECK(m.find("precision = fp16") != std::string::npos);
    CHECK(m.find("accum = 4") != std::string::npos);
  }
  CHECK(f.cache->stats().ooms == 1);
  // Still consistent and usable.
  Buffer after = f.alloc(512 * kKiB);
  CHECK(f.cache->stats().allocated_bytes.current == static_cast<int64_t>(kMiB + 512 * kKiB));
}

TEST_CASE("empty_cache returns every unused segment", "[caching]") {
  Fixture f;
  {
    Buffer a = f.alloc(100);
    Buffer b = f.alloc(3 * kMiB);
    Buffer c = f.alloc(30 * kMiB);
  }
  CHECK(f.cache->stats().reserved_bytes.current > 0);
  CHECK(f.cache->stats().allocated_bytes.current == 0);
  f.cache->empty_cache();
  CHECK(f.cache->stats().reserved_bytes.current == 0);
  CHECK(f.backend->in_use() == 0);
  CHECK(f.backend->frees() == f.backend->mallocs());
  CHECK(f.backend->bad_frees() == 0);
}

TEST_CASE("bad requests give clear errors and leave the allocator consistent", "[caching][errors]") {
  Fixture f(64 * kMiB);
  Buffer keep = f.alloc(1000);
  auto expect_error = [&](size_t bytes, const std::string& fragment) {
    try {
      f.alloc(bytes);
      FAIL("expected an error for " << bytes << " bytes");
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(fragment) != std::string::npos);
    }
  };
  expect_error(0, "zero-byte");
  expect_error((size_t{1} << 48) + 1, "2^48");
  expect_error(100 * kMiB, "capacity 64.00 MiB");
  const MemoryStats s = f.cache->stats();
  CHECK(s.allocated_bytes.current == 1024);
  CHECK(s.allocation_count.current == 1);
  Buffer more = f.alloc(1000);
  CHECK(f.cache->stats().allocation_count.current == 2);
}
