#include "memory/memory.h"

#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "core/cuda_runtime.h"
#include "memory/allocator_scope.h"
#include "memory/caching_allocator.h"
#include "memory/byte_size.h"
#include "memory/direct_allocator.h"
#include "memory/fault_injection.h"

namespace ember {
namespace {

constexpr int kMaxCudaDevices = 16;

size_t cpu_capacity_from_env() {
  const char* limit = std::getenv("EMBER_CPU_MEMORY_LIMIT");
  return limit ? parse_byte_size(limit, "EMBER_CPU_MEMORY_LIMIT") : 0;
}

// EMBER_ALLOCATOR=direct switches caching off (for comparison); caching is the default.
bool caching_enabled() {
  const char* mode = std::getenv("EMBER_ALLOCATOR");
  if (mode == nullptr || std::string(mode) == "caching") return true;
  EMBER_CHECK(std::string(mode) == "direct", "EMBER_ALLOCATOR='" << mode << "': expected caching or direct");
  return false;
}

std::unique_ptr<DeviceAllocator> make_allocator(Device device) {
  std::unique_ptr<RawBackend> backend =
      device.is_cpu() ? make_host_backend(cpu_capacity_from_env()) : make_cuda_backend(device.index);
  if (const char* faults = std::getenv("EMBER_FAULT_INJECTION")) {  // memory/fault_injection.h
    auto faulty = std::make_unique<FaultInjectingBackend>(std::move(backend));
    faulty->arm(faults, "EMBER_FAULT_INJECTION");
    backend = std::move(faulty);
  }
  if (caching_enabled()) return std::make_unique<CachingAllocator>(std::move(backend));
  return std::make_unique<DirectAllocator>(std::move(backend));
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
  if (DeviceAllocator* scoped = scoped_allocator_for(device)) return *scoped;
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

void relabel(const Tensor& t, MemoryCategory category) {
  Buffer& buffer = t.storage()->buffer;
  if (buffer.data() == nullptr || buffer.category() == category) return;
  allocator_for(t.device()).relabel(buffer, category);
}

void set_cpu_memory_limit(size_t bytes) { allocator_for(kCPU).backend().set_capacity(bytes); }

std::string memory_summary(Device device) {
  DeviceAllocator& a = allocator_for(device);
  return format_memory_stats(a.stats(), device.str() + " " + a.name());
}

}  // namespace ember
