#pragma once
// Rows [begin, begin + count) of a contiguous tensor along dim 0, as a view: no copy,
// no graph. How the Trainer cuts micro-batches and checkpointing takes its probe.
//
//   ember::Tensor first_half = ember::train::batch_rows(images, 0, images.size(0) / 2);
#include <cstdint>

#include "core/error.h"
#include "core/tensor.h"

namespace ember::train {

inline Tensor batch_rows(const Tensor& t, int64_t begin, int64_t count) {
  EMBER_CHECK(t.dim() >= 1 && begin >= 0 && count >= 0 && begin + count <= t.size(0),
              "batch_rows: rows [" << begin << ", " << begin + count << ") are not inside " << t.shape());
  std::vector<int64_t> sizes = t.sizes();
  const size_t row_bytes = sizes[0] == 0 ? 0 : t.nbytes() / static_cast<size_t>(sizes[0]);
  sizes[0] = count;
  return Tensor(t.storage(), t.impl()->offset_bytes + static_cast<size_t>(begin) * row_bytes, Shape(sizes),
                t.dtype(), t.device());
}

}  // namespace ember::train
