#include "core/cuda_runtime.h"

#include <string>

#include "core/error.h"
#include "core/simulation.h"

#ifdef EMBER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ember::cuda {

bool compiled_with_cuda() {
#ifdef EMBER_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int device_count() {
#ifdef EMBER_HAVE_CUDA
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky "no driver" error
      return 0;
    }
    return n;
  }();
  return count;
#else
  return 0;
#endif
}

void check_device(const Device& device, const char* op) {
  if (!device.is_cuda() || simulating()) return;  // a shape-only run plans for a GPU it need not have
  EMBER_CHECK(compiled_with_cuda(), op << ": " << device << " requested but ember was built without CUDA "
                                       << "(configure with -DEMBER_CUDA=ON on a machine with nvcc)");
  EMBER_CHECK(device.index < device_count(), op << ": " << device << " requested but this machine has "
                                                << device_count() << " usable GPU(s)");
}

void synchronize() {
  for (int index = 0; index < device_count(); ++index) synchronize(Device(DeviceType::cuda, index));
}

void synchronize(const Device& device) {
#ifdef EMBER_HAVE_CUDA
  if (!device.is_cuda() || device.index >= device_count()) return;
  DeviceGuard guard(device);
  const cudaError_t status = cudaDeviceSynchronize();
  if (status != cudaSuccess) {
    cudaGetLastError();
    EMBER_THROW("cuda: synchronizing " << device << " failed: " << cudaGetErrorString(status));
  }
#else
  (void)device;
#endif
}

std::string device_name(int index) {
#ifdef EMBER_HAVE_CUDA
  cudaDeviceProp prop{};
  if (index < device_count() && cudaGetDeviceProperties(&prop, index) == cudaSuccess) return prop.name;
#endif
  (void)index;
  return "none";
}

int current_device() {
#ifdef EMBER_HAVE_CUDA
  int index = -1;
  if (device_count() == 0 || cudaGetDevice(&index) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return index;
#else
  return -1;
#endif
}

DeviceGuard::DeviceGuard(const Device& device) {
#ifdef EMBER_HAVE_CUDA
  if (!device.is_cuda()) return;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) {
    cudaGetLastError();
    EMBER_THROW("cuda: cannot read the current device to switch to " << device.str());
  }
  if (current == device.index) return;
  if (cudaSetDevice(device.index) != cudaSuccess) {
    cudaGetLastError();
    EMBER_THROW("cuda: cannot make " << device.str() << " the current device");
  }
  previous_ = current;
#else
  (void)device;
#endif
}

DeviceGuard::DeviceGuard(const Device& device, std::nothrow_t) noexcept {
#ifdef EMBER_HAVE_CUDA
  int current = 0;
  if (!device.is_cuda() || cudaGetDevice(&current) != cudaSuccess || current == device.index ||
      cudaSetDevice(device.index) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  previous_ = current;
#else
  (void)device;
#endif
}

DeviceGuard::~DeviceGuard() {
#ifdef EMBER_HAVE_CUDA
  if (previous_ >= 0) cudaSetDevice(previous_);  // never throws
#endif
}

}  // namespace ember::cuda
