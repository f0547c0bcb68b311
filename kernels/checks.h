#pragma once
// Argument checks shared by the kernel entry points. Every message names the op
// and the offending shapes, dtypes or devices. Also bump_version, the one way an
// entry point records that it writes into an argument.
#include <cstdint>
#include <type_traits>

#include "core/error.h"
#include "core/tensor.h"

namespace ember::kernels {

void check_defined(const Tensor& t, const char* op, const char* arg);
void check_floating(const Tensor& t, const char* op);
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op);
void check_same_device(const Tensor& a, const Tensor& b, const char* op);
void check_same_shape(const Tensor& a, const Tensor& b, const char* op);
void check_dtype(const Tensor& t, DType dtype, const char* op, const char* arg);
// dtype and device both match (the usual rule for two operands).
void check_compatible(const Tensor& a, const Tensor& b, const char* op);
// The one message for a class label outside [0, classes), for either backend (the entry points'
// check_label_range, kernels/backend_dispatch.h, throws it).
[[noreturn]] void throw_bad_label(const char* op, int64_t sample, int64_t label, int64_t classes);

// Records one in-place write into each of `written` (undefined ones are skipped), on the version
// counter that autograd checks (core/tensor.h: Storage::version). Every entry point that writes
// into an argument calls it exactly once per call, after its checks and before the backend runs
// (a backend that throws half-way has still written), for every tensor the call writes: fill_,
// add_, mul_scalar_, copy_, the factory fillers, the optimizer steps, the running statistics of
// batch_norm_stats and the mixed-precision unscale. Backends never call it.
template <class... Tensors>
void bump_version(const Tensors&... written) {
  static_assert((std::is_same_v<Tensors, Tensor> && ...), "bump_version takes tensors");
  ((written.defined() ? written.bump_version() : void()), ...);
}

}  // namespace ember::kernels
