#pragma once
// AllocatorScope: while it lives, allocator_for(device) on this thread returns the allocator it
// was given instead of the process's own, so real code (a training step) can run over an
// allocator of the caller's choosing: a fresh cache, a direct allocator over a fault-injecting
// backend (memory/fault_injection.h), the simulation's (memory/simulation.h).
//
//   CachingAllocator fresh(make_host_backend(0));
//   { AllocatorScope scope(kCPU, fresh);
//     Tensor t = randn({4, 4});   // t's bytes come from `fresh`
//   }
//
// Scopes nest; the innermost one for a device wins. A buffer goes back to the allocator that
// made it whatever scope is alive then, so that allocator must outlive every tensor made inside.
#include "core/device.h"
#include "memory/device_allocator.h"

namespace ember {

class AllocatorScope {
 public:
  AllocatorScope(Device device, DeviceAllocator& allocator);
  ~AllocatorScope();
  AllocatorScope(const AllocatorScope&) = delete;
  AllocatorScope& operator=(const AllocatorScope&) = delete;

 private:
  friend DeviceAllocator* scoped_allocator_for(Device device);
  Device device_;
  DeviceAllocator* allocator_;
  const AllocatorScope* outer_;
};

// The allocator an AllocatorScope on this thread gives `device`, or nullptr (memory/memory.cpp asks).
DeviceAllocator* scoped_allocator_for(Device device);

}  // namespace ember
