#pragma once
// The CUDA runtime as core/ sees it: device count and synchronisation. Every
// function works on machines without a GPU or driver: there are simply 0 GPUs.
#include <cstddef>

#include "core/allocator.h"

namespace ember::cuda {

// True when ember was compiled with the CUDA backend.
bool compiled_with_cuda();
// Number of usable GPUs; 0 without CUDA, a driver or a device.
int device_count();
inline bool is_available() { return device_count() > 0; }
// Throws a clear error when `device` cannot be used.
void check_device(const Device& device, const char* op);
void synchronize();
std::string device_name(int index);

}  // namespace ember::cuda
