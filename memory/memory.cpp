#include "memory/memory.h"

#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "core/cuda_runtime.h"
#include "memory/direct_allocator.h"

namespace ember {
namespace {

constexpr int kMaxCudaDevices = 16;

size_t cpu_capacity_from_env() {
  const char* limit = std::getenv("EMBER_CPU_MEMORY_LIMIT");
  return limit ? parse_byte_size(limit, "EMBER_CPU_MEMORY_LIMIT") : 0;
}

std::unique_ptr<DeviceAllocator> make_allocator(Device device) {
  if (device.is_cpu()) return std::make_unique<DirectAllocator>(make_host_backend(cpu_capacity_from_env()));
  return std::make_unique<DirectAllocator>(make_cuda_backend(device.index));
}

// Allocators live until the process ends: tensors in static storage may be
// freed after main returns, so they are never destroyed.
struct Registry {
  std::mutex mutex;
  DeviceAllocator* cpu = nullptr;
  std::array<DeviceAllocator*, kMaxCudaDevices> cuda{};
};
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

DeviceAllocator& allocator_for(Device device) {
  cuda::check_device(device, "allocate");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  DeviceAllocator*& slot = device.is_cpu() ? r.cpu : r.cuda.at(static_cast<size_t>(device.index));
  if (slot == nullptr) slot = make_allocator(device).release();
  return *slot;
}

MemoryStats memory_stats(Device device) { return allocator_for(device).stats(); }
void reset_peak_stats(Device device) { allocator_for(device).reset_peak_stats(); }
void empty_cache(Device device) { allocator_for(device).empty_cache(); }

std::string memory_summary(Device device) {
  DeviceAllocator& a = allocator_for(device);
  return format_memory_stats(a.stats(), device.str() + " " + a.name());
}

}  // namespace ember
