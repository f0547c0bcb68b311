#pragma once
// DType is a run-time property of a tensor, never an #ifdef.
//   f32: default; f64: gradcheck reference (CPU); f16: storage type, fp32 math;
//   i64: labels and indices; u8: images.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "core/half.h"

namespace ember {

enum class DType : uint8_t { f32, f64, f16, i64, u8 };

inline constexpr DType kFloat32 = DType::f32;
inline constexpr DType kFloat64 = DType::f64;
inline constexpr DType kFloat16 = DType::f16;
inline constexpr DType kInt64 = DType::i64;
inline constexpr DType kUInt8 = DType::u8;
// libtorch's other spellings of the same dtypes.
inline constexpr DType kFloat = DType::f32;
inline constexpr DType kDouble = DType::f64;
inline constexpr DType kHalf = DType::f16;
inline constexpr DType kLong = DType::i64;
inline constexpr DType kByte = DType::u8;

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);
DType parse_dtype(const std::string& name);  // "f32", "float32", "f16", "half", ...
bool is_floating(DType dtype);
inline std::ostream& operator<<(std::ostream& os, DType d) { return os << dtype_name(d); }

template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::f32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::f64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::f16; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::i64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::u8; };

// Calls fn with a value of the C++ type of `dtype` (only its type matters):
//   dispatch_dtype(t.dtype(), [&](auto tag) { using T = decltype(tag); ... });
template <class Fn>
decltype(auto) dispatch_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::f32: return fn(float{});
    case DType::f64: return fn(double{});
    case DType::f16: return fn(Half{});
    case DType::i64: return fn(int64_t{});
    case DType::u8: return fn(uint8_t{});
  }
  return fn(float{});
}

// Like dispatch_dtype, for the floating types only; others throw naming `op`.
void throw_not_floating(const char* op, DType dtype);
template <class Fn>
decltype(auto) dispatch_floating(const char* op, DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::f32: return fn(float{});
    case DType::f64: return fn(double{});
    case DType::f16: return fn(Half{});
    default: throw_not_floating(op, dtype);
  }
  return fn(float{});
}

// The type arithmetic on T happens in: fp32 for f16 and f32, fp64 for f64.
template <class T> struct ComputeType { using type = T; };
template <> struct ComputeType<Half> { using type = float; };
template <class T> using compute_t = typename ComputeType<T>::type;

}  // namespace ember
