#pragma once
// Scalar: one number read out of a tensor, what Tensor::item() returns without a template
// argument (libtorch's c10::Scalar): an integer (from an i64 or u8 tensor) held exactly, or a
// floating value (f16, f32, f64) held as a double. It converts to double on its own, so it reads as
// a number in arithmetic and printing; the to* methods convert explicitly, as libtorch's do.
//
//   float l = loss.item().toFloat();             // libtorch: loss.item().toFloat()
//   int64_t correct = hits.sum().item().toLong();
//   Tensor y = x.mm(w) + b.item();               // a double operand
//   std::cout << loss.item();                    // 0.3052
#include <cstdint>
#include <ostream>

namespace ember {

class Scalar {
 public:
  Scalar(double v) : floating_(true), d_(v) {}     // NOLINT: implicit, as libtorch's
  Scalar(int64_t v) : floating_(false), i_(v) {}   // NOLINT

  bool isFloatingPoint() const { return floating_; }
  bool isIntegral() const { return !floating_; }
  double toDouble() const { return floating_ ? d_ : static_cast<double>(i_); }
  float toFloat() const { return static_cast<float>(toDouble()); }
  // A floating value truncates toward zero, as a C++ cast does.
  int64_t toLong() const { return floating_ ? static_cast<int64_t>(d_) : i_; }
  int toInt() const { return static_cast<int>(toLong()); }
  bool toBool() const { return floating_ ? d_ != 0.0 : i_ != 0; }
  template <class T> T to() const { return floating_ ? static_cast<T>(d_) : static_cast<T>(i_); }
  operator double() const { return toDouble(); }  // NOLINT: implicit, so a Scalar reads as a number

 private:
  bool floating_;
  union {
    double d_;
    int64_t i_;
  };
};

// An integer as an integer, a floating value as std::ostream prints a double.
inline std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  return s.isIntegral() ? os << s.toLong() : os << s.toDouble();
}

}  // namespace ember
