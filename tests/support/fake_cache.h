#pragma once
// A CachingAllocator over a FakeBackend (tests/support/fake_backend.h), for the policy tests:
//
//   test::FakeCache f(16 << 20);                       // a 16 MiB fake device
//   Buffer a = f.alloc(4096, test::stream_id(1));      // on stream 1
//   f.backend->mallocs();  f.cache->stats().cache_hits;
#include <cstdint>
#include <memory>

#include "memory/caching_allocator.h"
#include "tests/support/fake_backend.h"

namespace ember::test {

struct FakeCache {
  explicit FakeCache(size_t capacity = size_t{1} << 30) {
    auto owned = std::make_unique<FakeBackend>(capacity);
    backend = owned.get();
    cache = std::make_unique<CachingAllocator>(std::move(owned));
  }
  Buffer alloc(size_t bytes, StreamHandle stream = nullptr, MemoryCategory c = MemoryCategory::activation) {
    AllocationRequest r;
    r.bytes = bytes;
    r.stream = stream;
    r.category = c;
    r.op = "test";
    return cache->allocate(r);
  }
  FakeBackend* backend;
  std::unique_ptr<CachingAllocator> cache;
};

inline StreamHandle stream_id(uintptr_t id) { return reinterpret_cast<StreamHandle>(id); }

}  // namespace ember::test
