#pragma once
// Internal to kernels/: the two backends' declarations (kernels/backend_api.inc and
// kernels/backend_into.inc),
// EMBER_BACKEND, which sends a checked call to the backend owning the device, and
// the range checks of labels and indices that the entry points share (they call a
// backend, so they live here rather than in kernels/checks.h; kernels/dispatch_indices.cpp).
// Included only by the kernels/dispatch_<family>.cpp files, one per op family.
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/cuda_runtime.h"
#include "core/simulation.h"
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
#define EMBER_BACKEND_CALL(device, fn, ...) \
  ((device).is_cuda() ? on_cuda_device((device), [&] { return cuda::fn(__VA_ARGS__); }) : cpu::fn(__VA_ARGS__))
#else
#define EMBER_BACKEND_CALL(device, fn, ...) ((void)(device), cpu::fn(__VA_ARGS__))
#endif

// What a skipped backend call returns in a shape-only run: nothing, or a value-initialised result.
template <class R>
R skipped_result() {
  if constexpr (!std::is_void_v<R>) return R{};
}

// EMBER_BACKEND(device, fn, args...) runs the backend's fn for the device; in a shape-only run
// (core/simulation.h) it runs nothing: the entry point has already allocated the outputs.
#define EMBER_BACKEND(device, fn, ...)                                                   \
  (::ember::simulating() ? skipped_result<decltype(cpu::fn(__VA_ARGS__))>() \
                         : EMBER_BACKEND_CALL(device, fn, __VA_ARGS__))
// For the backend functions that allocate scratch of their own (CPU convolution and f16
// matmul): they run in a shape-only run too, allocate their scratch and return before the
// math, so a plan sees the scratch. No CUDA call is made in one: the entry point allocates what
// the CUDA backend would (the convolution's, kernels/conv_scratch_cuda.h).
#define EMBER_BACKEND_WITH_SCRATCH(device, fn, ...)                                              \
  ((::ember::simulating() && (device).is_cuda()) ? skipped_result<decltype(cpu::fn(__VA_ARGS__))>() \
                                                  : EMBER_BACKEND_CALL(device, fn, __VA_ARGS__))

// Throws (kernels/checks.h: throw_bad_label) when a label is outside [0, classes).
void check_label_range(const Tensor& labels, int64_t classes, const char* op);
// Throws when an element of `indices` is outside [0, limit): the message names op, the value, its
// position in `indices`, the allowed range and `range_of` (what the limit is, e.g. "for dim 1 of [2, 3]").
void check_index_range(const Tensor& indices, int64_t limit, const char* op, const std::string& range_of);

}  // namespace ember::kernels
