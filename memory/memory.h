#pragma once
// The memory subsystem's public face: which allocator serves a device, its
// statistics, and cache control.
//
//   ember::Tensor x = ember::empty({64, 784});        // bytes come from allocator_for(kCPU)
//   std::cout << ember::memory_summary(ember::kCPU);  // table of current/peak bytes by category
//   ember::reset_peak_stats(ember::kCPU);
#include <string>

#include "core/device.h"
#include "core/tensor.h"
#include "memory/scopes.h"
#include "memory/device_allocator.h"
#include "memory/out_of_memory.h"
#include "memory/stats.h"

namespace ember {

DeviceAllocator& allocator_for(Device device);
MemoryStats memory_stats(Device device = kCPU);
void reset_peak_stats(Device device = kCPU);
void empty_cache(Device device = kCPU);
std::string memory_summary(Device device = kCPU);
// Caps the host memory ember may use (what EMBER_CPU_MEMORY_LIMIT and
// --memory-limit set), so a CPU-only student meets a realistic out-of-memory.
// 0 removes the cap.
void set_cpu_memory_limit(size_t bytes);
// Moves the bytes of t's storage to another category (stats and recorder follow).
void relabel(const Tensor& t, MemoryCategory category);

}  // namespace ember
