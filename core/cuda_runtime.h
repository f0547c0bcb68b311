#pragma once
// The CUDA runtime as core/ sees it: device count and synchronisation. Every
// function works on machines without a GPU or driver: there are simply 0 GPUs.
#include <cstddef>
#include <new>
#include <string>

#include "core/allocator.h"

namespace ember::cuda {

// True when ember was compiled with the CUDA backend.
bool compiled_with_cuda();
// Number of usable GPUs; 0 without CUDA, a driver or a device.
int device_count();
inline bool is_available() { return device_count() > 0; }
// Throws a clear error when `device` cannot be used.
void check_device(const Device& device, const char* op);
// Blocks until every GPU (or `device`) has finished all work queued on any of its streams; throws
// when a kernel failed asynchronously. A no-op without a GPU or for a CPU device.
void synchronize();
void synchronize(const Device& device);
std::string device_name(int index);
// The calling thread's current CUDA device index; -1 without CUDA or a GPU.
int current_device();

// Makes `device` the current CUDA device for the scope and restores the previous one after
// (a no-op for a CPU device or without CUDA). Kernel dispatch, cuBLAS and cuDNN handle
// creation and the CUDA allocator's backend hold one, so cuda:1 and the loader's thread
// get the device they name.
//
//   { ember::cuda::DeviceGuard guard(t.device());  launch(...); }
class DeviceGuard {
 public:
  explicit DeviceGuard(const Device& device);  // throws when the switch fails
  // For code that must not throw (an allocator's free): a failed switch is cleared and left alone.
  DeviceGuard(const Device& device, std::nothrow_t) noexcept;
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  [[maybe_unused]] int previous_ = -1;  // -1: nothing to restore (used only by the CUDA backend)
};

}  // namespace ember::cuda
