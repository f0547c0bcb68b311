#pragma once
// Argument checks shared by the kernel entry points. Every message names the op
// and the offending shapes, dtypes or devices.
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

}  // namespace ember::kernels
