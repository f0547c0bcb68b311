#include "core/dtype.h"

#include "core/error.h"

namespace ember {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::f16: return 2;
    case DType::i64: return 8;
    case DType::u8: return 1;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
  }
  return "?";
}

DType parse_dtype(const std::string& name) {
  if (name == "f32" || name == "float32" || name == "float") return DType::f32;
  if (name == "f64" || name == "float64" || name == "double") return DType::f64;
  if (name == "f16" || name == "float16" || name == "half") return DType::f16;
  if (name == "i64" || name == "int64" || name == "long") return DType::i64;
  if (name == "u8" || name == "uint8") return DType::u8;
  EMBER_THROW("unknown dtype '" << name << "' (expected f32, f64, f16, i64 or u8)");
}

bool is_floating(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f64 || dtype == DType::f16;
}

void throw_not_floating(const char* op, DType dtype) {
  EMBER_THROW(op << ": expected a floating dtype (f32, f64, f16), got " << dtype_name(dtype));
}

}  // namespace ember
