#pragma once
// On the CPU f16 is a storage type: an op with no f16 loop runs in f32 on widened
// operands and narrows its result back. The widened operands and the f32 result are
// scratch, counted as `temporary`; only the narrowed result takes the caller's category
// (an activation stays the size of an f16 activation in the memory report).
//
//   if (x.dtype() == DType::f16)
//     return computed_in_f32([&] { return cpu::conv2d(widened(x), widened(w), widened(b), args); });
//
// An op over a batch of images widens a few images at a time (computed_in_f32_by_images),
// so its scratch is that of kF16ChunkImages images, not of the whole batch.
#include <algorithm>
#include <cstdint>

#include "core/dtype.h"
#include "core/row_view.h"
#include "core/tensor.h"
#include "kernels/ops.h"
#include "memory/scopes.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

// t as f32 if it is f16, as scratch; t itself otherwise (undefined stays undefined).
inline Tensor widened(const Tensor& t) {
  if (!t.defined() || t.dtype() != DType::f16) return t;
  CategoryScope scratch(MemoryCategory::temporary);
  return kernels::cast(t, DType::f32);
}

template <class Fn>
Tensor computed_in_f32(Fn&& compute) {
  Tensor wide;
  {
    CategoryScope scratch(MemoryCategory::temporary);
    wide = compute();
  }
  return kernels::cast(wide, DType::f16);
}

inline constexpr int64_t kF16ChunkImages = 16;

// An f16 result of shape `out_shape` whose images are computed independently:
// compute(begin, count) returns images [begin, begin + count) in f32 from widened slices.
template <class Fn>
Tensor computed_in_f32_by_images(const Shape& out_shape, Device device, Fn&& compute) {
  Tensor out = empty(out_shape, TensorOptions().dtype(DType::f16).device(device));
  const int64_t images = out_shape.dim() == 0 ? 0 : out_shape[0];
  for (int64_t begin = 0; begin < images; begin += kF16ChunkImages) {
    const int64_t count = std::min(kF16ChunkImages, images - begin);
    CategoryScope scratch(MemoryCategory::temporary);
    kernels::copy_(row_view(out, begin, count), compute(begin, count));
  }
  return out;
}

// An f16 result that is a sum over images: compute(begin, count) returns the f32 sum over
// images [begin, begin + count); the chunks' sums are added in order, in f32, then narrowed.
template <class Fn>
Tensor summed_in_f32_by_images(int64_t images, Fn&& compute) {
  Tensor total;
  {
    CategoryScope scratch(MemoryCategory::temporary);
    // begin == 0 runs once for an empty batch too: its (zero) sum still has the weight's shape.
    for (int64_t begin = 0; begin == 0 || begin < images; begin += kF16ChunkImages) {
      const int64_t count = std::min(kF16ChunkImages, images - begin);
      Tensor part = compute(begin, count);
      if (total.defined()) kernels::add_(total, part, 1.0);
      else total = part;
    }
  }
  return kernels::cast(total, DType::f16);
}

}  // namespace ember::kernels::cpu
