#pragma once
// DirectAllocator: every request goes straight to the backend and every free
// straight back. No cache; kept as the baseline the caching allocator is
// measured against (EMBER_ALLOCATOR=direct).
#include <memory>
#include <mutex>

#include "memory/device_allocator.h"
#include "memory/raw_backend.h"
#include "memory/stats.h"

namespace ember {

class DirectAllocator final : public DeviceAllocator {
 public:
  explicit DirectAllocator(std::unique_ptr<RawBackend> backend);
  Buffer allocate(const AllocationRequest& request) override;
  std::string name() const override { return "direct(" + backend_->name() + ")"; }
  RawBackend& backend() override { return *backend_; }

  void relabel(Buffer& buffer, MemoryCategory category) override;
  MemoryStats stats() const override;
  void reset_peak_stats() override;

 protected:
  void release(void* data, size_t bytes, Device device, MemoryCategory category,
               StreamHandle stream) noexcept override;

 private:
  std::unique_ptr<RawBackend> backend_;
  mutable std::mutex mutex_;
  MemoryStats stats_;
};

}  // namespace ember
