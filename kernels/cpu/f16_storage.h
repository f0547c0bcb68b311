#pragma once
// On the CPU f16 is a storage type: an op with no f16 loop runs in f32 on widened
// operands and narrows its result into the f16 output its entry point allocated. The
// widened operands and the f32 result are scratch, counted as `temporary`; only the
// output takes the caller's category (an activation stays the size of an f16 activation
// in the memory report).
//
//   if (c.dtype() == DType::f16)
//     return computed_in_f32(c, [&](const Tensor& c32) { matmul(widened(a), widened(b), ta, tb, c32); });
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

// An f32 scratch of out's shape (its category: temporary).
inline Tensor f32_scratch(const Shape& shape) {
  CategoryScope scratch(MemoryCategory::temporary);
  return empty(shape, TensorOptions().dtype(DType::f32));
}

// out (f16) = compute's result: compute(out32) writes it in f32 into a scratch of out's shape.
template <class Fn>
void computed_in_f32(const Tensor& out, Fn&& compute) {
  const Tensor wide = f32_scratch(out.shape());
  compute(wide);
  kernels::copy_(out, wide);
}

inline constexpr int64_t kF16ChunkImages = 16;

// out (f16), whose images are computed independently: compute(begin, count, out32) writes
// images [begin, begin + count) in f32, from widened slices, into a scratch of that many images.
template <class Fn>
void computed_in_f32_by_images(const Tensor& out, Fn&& compute) {
  const int64_t images = out.size(0);
  for (int64_t begin = 0; begin < images; begin += kF16ChunkImages) {
    const int64_t count = std::min(kF16ChunkImages, images - begin);
    const Tensor out_rows = row_view(out, begin, count);
    const Tensor wide = f32_scratch(out_rows.shape());
    compute(begin, count, wide);
    kernels::copy_(out_rows, wide);
  }
}

// out (f16) = a sum over images: compute(begin, count, part32) writes the f32 sum over images
// [begin, begin + count) into a scratch of out's shape; the chunks' sums are added in order,
// in f32, then narrowed into out.
template <class Fn>
void summed_in_f32_by_images(const Tensor& out, int64_t images, Fn&& compute) {
  const Tensor total = f32_scratch(out.shape());
  const Tensor part = images > kF16ChunkImages ? f32_scratch(out.shape()) : Tensor();
  for (int64_t begin = 0; begin < images; begin += kF16ChunkImages) {
    const int64_t count = std::min(kF16ChunkImages, images - begin);
    compute(begin, count, begin == 0 ? total : part);
    if (begin > 0) kernels::add_(total, part, 1.0);
  }
  kernels::copy_(out, total);
}

}  // namespace ember::kernels::cpu
