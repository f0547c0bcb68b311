#pragma once
// Internal to kernels/: the two backends' declarations (kernels/backend_api.inc and
// kernels/backend_into.inc),
// EMBER_BACKEND, which sends a checked call to the backend owning the device, and
// the range checks of labels and indices that the entry points share (they call a
// backend, so they live here rather than in kernels/checks.h).
// Included only by the dispatch_*.cpp files.
#include <string>

#include "core/cuda_runtime.h"
#include "kernels/ops.h"

namespace ember::kernels {

namespace cpu {
#include "kernels/backend_api.inc"
#include "kernels/backend_into.inc"
}
#ifdef EMBER_HAVE_CUDA
namespace cuda {
#include "kernels/backend_api.inc"
#include "kernels/backend_into.inc"
}
// A CUDA call runs with the tensor's device current (and the caller's restored after).
template <class Call>
decltype(auto) on_cuda_device(const Device& device, Call&& call) {
  ::ember::cuda::DeviceGuard guard(device);
  return call();
}
#define EMBER_BACKEND(device, fn, ...) \
  ((device).is_cuda() ? on_cuda_device((device), [&] { return cuda::fn(__VA_ARGS__); }) : cpu::fn(__VA_ARGS__))
#else
#define EMBER_BACKEND(device, fn, ...) ((void)(device), cpu::fn(__VA_ARGS__))
#endif

// Throws (kernels/checks.h: throw_bad_label) when a label is outside [0, classes).
void check_label_range(const Tensor& labels, int64_t classes, const char* op);
// Throws when an element of `indices` is outside [0, limit): the message names op, the value, its
// position in `indices`, the allowed range and `range_of` (what the limit is, e.g. "for dim 1 of [2, 3]").
void check_index_range(const Tensor& indices, int64_t limit, const char* op, const std::string& range_of);

}  // namespace ember::kernels
