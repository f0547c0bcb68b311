#pragma once
// On the CPU f16 is a storage type: an op with no f16 loop runs in f32 on widened
// operands and narrows its result back. The widened operands and the f32 result are
// scratch, counted as `temporary`; only the narrowed result takes the caller's category
// (an activation stays the size of an f16 activation in the memory report).
//
//   if (x.dtype() == DType::f16)
//     return computed_in_f32([&] { return cpu::conv2d(widened(x), widened(w), widened(b), args); });
#include "core/dtype.h"
#include "core/tensor.h"
#include "kernels/ops.h"
#include "memory/category_scope.h"

namespace ember::kernels::cpu {

// t as f32 if it is f16; t itself otherwise (undefined stays undefined). Call inside computed_in_f32.
inline Tensor widened(const Tensor& t) { return t.defined() && t.dtype() == DType::f16 ? kernels::cast(t, DType::f32) : t; }

template <class Fn>
Tensor computed_in_f32(Fn&& compute) {
  Tensor wide;
  {
    CategoryScope scratch(MemoryCategory::temporary);
    wide = compute();
  }
  return kernels::cast(wide, DType::f16);
}

}  // namespace ember::kernels::cpu
