#pragma once
// An allocator over host memory whose backend refuses on demand (memory/fault_injection.h), for
// tests that make code run out of memory at a chosen allocation:
//
//   test::FaultyAllocator faulty;                    // direct: each tensor is one backend malloc
//   optim::SGD sgd(params, ...);                     // declared after: its state dies first
//   { AllocatorScope scope(kCPU, *faulty.allocator);
//     faulty.faults->fail_once(2);                   // the second tensor allocated fails
//     CHECK_THROWS_AS(sgd.step(), OutOfMemoryError); }
#include <memory>

#include "memory/caching_allocator.h"
#include "memory/direct_allocator.h"
#include "memory/fault_injection.h"

namespace ember::test {

struct FaultyAllocator {
  explicit FaultyAllocator(bool caching = false) {
    auto owned = std::make_unique<FaultInjectingBackend>(make_host_backend(0));
    faults = owned.get();
    if (caching) allocator = std::make_unique<CachingAllocator>(std::move(owned));
    else allocator = std::make_unique<DirectAllocator>(std::move(owned));
  }
  std::unique_ptr<DeviceAllocator> allocator;
  FaultInjectingBackend* faults = nullptr;
};

}  // namespace ember::test
