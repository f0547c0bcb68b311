#pragma once
// DeviceAllocator: an Allocator that also reports statistics and can drop its
// cache. One exists per device; allocator_for(device) returns it.
#include "core/allocator.h"
#include "memory/raw_backend.h"
#include "memory/stats.h"

namespace ember {

class DeviceAllocator : public Allocator {
 public:
  virtual MemoryStats stats() const = 0;
  virtual void reset_peak_stats() = 0;
  virtual RawBackend& backend() = 0;
};

}  // namespace ember
