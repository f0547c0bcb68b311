#pragma once
// Strides that walk an input of shape `in` while iterating an output of shape
// `out` (in broadcasts to out): dims that broadcast get stride 0.
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace ember::kernels::cpu {

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Offset of output element `linear` in an input with `strides` (from broadcast_strides).
inline int64_t broadcast_offset(int64_t linear, const std::vector<int64_t>& out_sizes,
                                const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t d = out_sizes.size(); d-- > 0;) {
    const int64_t size = out_sizes[d];
    offset += (linear % size) * strides[d];
    linear /= size;
  }
  return offset;
}

}  // namespace ember::kernels::cpu
