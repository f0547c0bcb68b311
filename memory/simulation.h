#pragma once
// A shape-only run of real code (core/simulation.h): inside a SimulationScope every
// allocation for its device, on this thread, is served by a fresh CachingAllocator — the
// same class and policy as the real one — over a raw backend that hands out address space
// and no memory, and the kernels skip their math. What the scope's allocator then reports
// (memory/stats.h) is what the same code would allocate and reserve for real; ember plan
// (apps/plan_command.h) is built on it.
//
//   SimulationScope sim(kCPU);
//   Tensor x = randn({256, 1, 28, 28});       // 784 KiB "allocated", no memory touched
//   Tensor loss = cross_entropy(model->forward(x), labels);
//   loss.backward();
//   sim.stats().allocated_bytes.peak;         // the real step's peak, to the byte
//
// Scopes do not nest. Tensors that outlive the scope keep its allocator alive (it is never
// destroyed while it holds blocks), but their values are meaningless.
#include <cstddef>
#include <optional>

#include "core/device.h"
#include "memory/allocator_scope.h"
#include "memory/device_allocator.h"

namespace ember {

class SimulationScope {
 public:
  // capacity: the simulated device's memory in bytes (0: unlimited).
  explicit SimulationScope(Device device, size_t capacity = 0);
  ~SimulationScope();
  SimulationScope(const SimulationScope&) = delete;
  SimulationScope& operator=(const SimulationScope&) = delete;

  DeviceAllocator& allocator() { return *allocator_; }
  MemoryStats stats() const { return allocator_->stats(); }

 private:
  DeviceAllocator* allocator_;
  std::optional<AllocatorScope> scope_;  // makes allocator_ serve the device on this thread
};

}  // namespace ember
