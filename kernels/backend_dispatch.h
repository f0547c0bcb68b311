#pragma once
// Internal to kernels/: the two backends' declarations of kernels/backend_api.inc
// and EMBER_BACKEND, which sends a checked call to the backend owning the device.
// Included only by the dispatch_*.cpp files.
#include "kernels/ops.h"

namespace ember::kernels {

namespace cpu {
#include "kernels/backend_api.inc"
}
#ifdef EMBER_HAVE_CUDA
namespace cuda {
#include "kernels/backend_api.inc"
}
#define EMBER_BACKEND(device, fn, ...) ((device).is_cuda() ? cuda::fn(__VA_ARGS__) : cpu::fn(__VA_ARGS__))
#else
#define EMBER_BACKEND(device, fn, ...) ((void)(device), cpu::fn(__VA_ARGS__))
#endif

}  // namespace ember::kernels
