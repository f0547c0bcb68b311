#pragma once
// A hook the allocators call on every allocation and free, so the recorder
// (memory/recorder.h) can see where bytes go without the allocators knowing it.
#include <cstdint>
#include <vector>

#include "core/allocator.h"
#include "memory/scopes.h"  // Phase, for observers that read current_phase()

namespace ember {

struct AllocationEvent {
  bool allocate = true;  // false: a free
  const void* ptr = nullptr;
  int64_t bytes = 0;  // block bytes as the allocator counts them
  MemoryCategory category = MemoryCategory::temporary;
  Device device;
  const char* op = "";                   // allocations only
  const Shape* shape = nullptr;          // allocations only
  int64_t allocated_after = 0;           // the allocator's allocated_bytes after the event
  int64_t reserved_after = 0;            // and its reserved_bytes
};

class AllocationObserver {
 public:
  virtual ~AllocationObserver() = default;
  // Called under the allocator's lock: keep it short, never allocate tensors.
  virtual void on_event(const AllocationEvent& event) noexcept = 0;
};

void set_allocation_observer(AllocationObserver* observer);  // nullptr: none
AllocationObserver* allocation_observer();

// Installs an observer for a scope on top of the one already installed (the memory report's
// recorder, say) and puts that one back at the end. Declare it as the observer's last member,
// so it installs once the rest is built and uninstalls before the rest is torn down:
//
//   class Watch final : public AllocationObserver {
//     void on_event(const AllocationEvent& e) noexcept override { ...; install_.forward(e); }
//     ObserverInstall install_{this};
//   };
class ObserverInstall {
 public:
  explicit ObserverInstall(AllocationObserver* observer) : previous_(allocation_observer()) {
    set_allocation_observer(observer);
  }
  ~ObserverInstall() { set_allocation_observer(previous_); }
  ObserverInstall(const ObserverInstall&) = delete;
  ObserverInstall& operator=(const ObserverInstall&) = delete;
  // Passes an event on to the observer that was installed before, if any.
  void forward(const AllocationEvent& e) const noexcept {
    if (previous_ != nullptr) previous_->on_event(e);
  }

 private:
  AllocationObserver* previous_;
};

// What the allocators call: forwards to the observer, if one is set.
struct MemoryStats;
void notify_allocation_observer(bool allocate, const void* ptr, int64_t bytes, MemoryCategory category,
                                const AllocationRequest* request, Device device, const MemoryStats& stats) noexcept;

}  // namespace ember
