#include "kernels/checks.h"

namespace ember::kernels {

void check_defined(const Tensor& t, const char* op, const char* arg) {
  EMBER_CHECK(t.defined(), op << ": argument '" << arg << "' is an undefined tensor");
}

void check_floating(const Tensor& t, const char* op) {
  EMBER_CHECK(is_floating(t.dtype()),
              op << ": expected a floating tensor (f32, f64, f16), got " << t.dtype() << " " << t.shape());
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  EMBER_CHECK(a.dtype() == b.dtype(), op << ": dtype mismatch, " << a.dtype() << " " << a.shape() << " vs "
                                         << b.dtype() << " " << b.shape() << " (cast one with .to(dtype))");
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  EMBER_CHECK(a.device() == b.device(), op << ": device mismatch, " << a.shape() << " on " << a.device()
                                           << " vs " << b.shape() << " on " << b.device()
                                           << " (move one with .to(device))");
}

void check_same_shape(const Tensor& a, const Tensor& b, const char* op) {
  EMBER_CHECK(a.shape() == b.shape(), op << ": shape mismatch, " << a.shape() << " vs " << b.shape());
}

void check_dtype(const Tensor& t, DType dtype, const char* op, const char* arg) {
  EMBER_CHECK(t.dtype() == dtype,
              op << ": '" << arg << "' must be " << dtype << ", got " << t.dtype() << " " << t.shape());
}

void check_compatible(const Tensor& a, const Tensor& b, const char* op) {
  check_same_device(a, b, op);
  check_same_dtype(a, b, op);
}

void throw_bad_label(const char* op, int64_t sample, int64_t label, int64_t classes) {
  EMBER_THROW(op << ": label " << label << " of sample " << sample << " is out of range for " << classes
                 << " classes (expected 0 <= label < " << classes << ")");
}

}  // namespace ember::kernels
