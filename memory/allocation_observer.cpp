#include "memory/allocation_observer.h"

#include <atomic>

#include "memory/stats.h"

namespace ember {
namespace {
std::atomic<AllocationObserver*> global_observer{nullptr};
}  // namespace

void set_allocation_observer(AllocationObserver* observer) { global_observer.store(observer); }
AllocationObserver* allocation_observer() { return global_observer.load(std::memory_order_relaxed); }

void notify_allocation_observer(bool allocate, const void* ptr, int64_t bytes, MemoryCategory category,
                                const AllocationRequest* request, Device device, const MemoryStats& stats) noexcept {
  AllocationObserver* observer = allocation_observer();
  if (observer == nullptr) return;
  AllocationEvent event;
  event.allocate = allocate;
  event.ptr = ptr;
  event.bytes = bytes;
  event.category = category;
  event.device = device;
  if (request != nullptr) {
    event.op = request->op;
    event.shape = request->shape;
  }
  event.allocated_after = stats.allocated_bytes.current;
  event.reserved_after = stats.reserved_bytes.current;
  observer->on_event(event);
}

}  // namespace ember
