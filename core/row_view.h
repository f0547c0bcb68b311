#pragma once
// Rows [begin, begin + count) of a contiguous tensor along dim 0, as a view: no copy, no
// graph (undefined stays undefined). How the Trainer cuts micro-batches, checkpointing
// takes its probe, and CPU f16 ops widen a few images at a time.
//
//   ember::Tensor first_half = ember::row_view(images, 0, images.size(0) / 2);
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"

namespace ember {

inline Tensor row_view(const Tensor& t, int64_t begin, int64_t count) {
  if (!t.defined()) return t;
  EMBER_CHECK(t.dim() >= 1 && begin >= 0 && count >= 0 && begin + count <= t.size(0),
              "row_view: rows [" << begin << ", " << begin + count << ") are not inside " << t.shape());
  std::vector<int64_t> sizes = t.sizes();
  const size_t row_bytes = sizes[0] == 0 ? 0 : t.nbytes() / static_cast<size_t>(sizes[0]);
  sizes[0] = count;
  return Tensor(t.storage(), t.impl()->offset_bytes + static_cast<size_t>(begin) * row_bytes, Shape(sizes),
                t.dtype(), t.device());
}

}  // namespace ember
