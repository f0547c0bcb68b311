// The caching allocator's cross-stream rule over a fake backend whose events the test
// completes by hand or makes fail: a block freed while another stream used it is never
// reused before that stream is known to be done, and an out-of-memory waits for such
// blocks before it gives up (memory/caching_allocator.cpp's policy).
#include <catch2/catch.hpp>

#include "memory/out_of_memory.h"
#include "tests/support/byte_units.h"
#include "tests/support/fake_cache.h"

using namespace ember;
using namespace ember::test;

namespace {

// Frees a block of `bytes` that stream 2 used; it was allocated on stream 1. Returns its address.
void* free_used_by_stream_2(FakeCache& f, size_t bytes) {
  Buffer a = f.alloc(bytes, stream_id(1));
  f.cache->record_stream(a, stream_id(2));
  return a.data();
}

void check_events_clean(const FakeCache& f) {
  CHECK(f.backend->live_events() == 0);
  CHECK(f.backend->bad_event_uses() == 0);
}

}  // namespace

TEST_CASE("a block is reused only on the stream it was allocated on", "[caching][streams]") {
  FakeCache f;
  Buffer a = f.alloc(4 * kKiB, stream_id(1));
  a = Buffer();
  Buffer b = f.alloc(4 * kKiB, stream_id(2));
  CHECK(f.backend->mallocs() == 2);
  Buffer c = f.alloc(4 * kKiB, stream_id(1));
  CHECK(f.backend->mallocs() == 2);
  CHECK(f.cache->stats().cache_hits == 1);
}

TEST_CASE("record_stream delays reuse until the other stream's event completes", "[caching][streams]") {
  FakeCache f;
  void* p = free_used_by_stream_2(f, 4 * kKiB);
  CHECK(f.cache->stats().active_bytes.current == static_cast<int64_t>(4 * kKiB));  // still in use on stream 2
  Buffer b = f.alloc(4 * kKiB, stream_id(1));
  CHECK(b.data() != p);
  f.backend->complete_stream(stream_id(1));  // another stream's events change nothing
  Buffer c = f.alloc(4 * kKiB, stream_id(1));
  CHECK(c.data() != p);
  f.backend->complete_events();
  Buffer d = f.alloc(4 * kKiB, stream_id(1));
  CHECK(d.data() == p);
  CHECK(f.backend->event_synchronizations() + f.backend->stream_synchronizations() == 0);  // polled, never waited
  check_events_clean(f);
}

TEST_CASE("a block whose event cannot be made or recorded waits for its stream to be synchronised",
          "[caching][streams]") {
  for (const bool creation : {true, false}) {
    INFO((creation ? "cudaEventCreate fails" : "cudaEventRecord fails"));
    FakeCache f;
    if (creation) f.backend->fail_event_creation(true);
    else f.backend->fail_event_record(true);
    void* p = free_used_by_stream_2(f, 4 * kKiB);
    f.backend->fail_event_creation(false);
    f.backend->fail_event_record(false);
    CHECK(f.cache->stats().active_bytes.current == static_cast<int64_t>(4 * kKiB));
    // No event will ever say stream 2 is done: however often the allocator polls, the block stays out.
    Buffer b = f.alloc(4 * kKiB, stream_id(1));
    f.backend->complete_events();
    Buffer c = f.alloc(4 * kKiB, stream_id(1));
    CHECK(b.data() != p);
    CHECK(c.data() != p);
    CHECK(f.backend->stream_synchronizations() == 0);  // allocations that find memory never block
    // empty_cache synchronises stream 2; then the block is free (the segment still holds b and c).
    f.cache->empty_cache();
    CHECK(f.backend->stream_synchronizations() == 1);
    CHECK(f.cache->stats().active_bytes.current == static_cast<int64_t>(8 * kKiB));
    Buffer d = f.alloc(4 * kKiB, stream_id(1));
    CHECK(d.data() == p);
    check_events_clean(f);
  }
}

TEST_CASE("a block whose stream cannot be synchronised is never reused", "[caching][streams][oom]") {
  FakeCache f(2 * kMiB);
  f.backend->fail_event_record(true);
  f.backend->fail_synchronize(true);
  void* p = free_used_by_stream_2(f, kMiB);
  Buffer rest = f.alloc(kMiB, stream_id(1));  // the segment's other half: the device is full
  f.cache->empty_cache();  // tries, and keeps the block out
  CHECK_THROWS_AS(f.alloc(kMiB, stream_id(1)), OutOfMemoryError);
  CHECK(f.cache->stats().active_bytes.current == static_cast<int64_t>(2 * kMiB));
  // Once stream 2 can be synchronised, the out-of-memory rung that waits for it frees the block.
  f.backend->fail_synchronize(false);
  Buffer b = f.alloc(kMiB, stream_id(1));
  CHECK(b.data() == p);
  CHECK(f.cache->stats().ooms == 1);
  check_events_clean(f);
}

TEST_CASE("out of memory first waits for the blocks pending on another stream", "[caching][streams][oom]") {
  for (const bool recorded : {true, false}) {
    INFO((recorded ? "the event was recorded" : "no event could be recorded"));
    FakeCache f(2 * kMiB);  // one small-pool segment, nothing more
    f.backend->fail_event_record(!recorded);
    void* p = free_used_by_stream_2(f, kMiB);
    f.backend->fail_event_record(false);
    Buffer rest = f.alloc(kMiB, stream_id(1));
    // The only memory that can serve this is the block stream 2 may still be using.
    Buffer b = f.alloc(kMiB, stream_id(1));
    CHECK(b.data() == p);
    CHECK(f.backend->event_synchronizations() == (recorded ? 1 : 0));
    CHECK(f.backend->stream_synchronizations() == (recorded ? 0 : 1));
    const MemoryStats s = f.cache->stats();
    CHECK(s.ooms == 0);
    CHECK(s.retries == 0);  // no cached segment had to go
    CHECK(f.backend->mallocs() == 1);
    check_events_clean(f);
  }
}

TEST_CASE("empty_cache waits for pending blocks and returns their segments", "[caching][streams]") {
  FakeCache f;
  free_used_by_stream_2(f, 4 * kKiB);
  CHECK(f.cache->stats().reserved_bytes.current == static_cast<int64_t>(2 * kMiB));
  f.cache->empty_cache();
  CHECK(f.cache->stats().reserved_bytes.current == 0);
  CHECK(f.cache->stats().active_bytes.current == 0);
  CHECK(f.backend->event_synchronizations() == 1);
  CHECK(f.backend->in_use() == 0);
  check_events_clean(f);
}
