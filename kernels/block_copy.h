#pragma once
// BlockCopy: the one copy kernel behind narrow, select, slice, permute and cat, and their
// backwards. It walks every coordinate c of a block of `sizes` and copies
//   dst[dst_offset + sum_d c[d] * dst_strides[d]] = src[src_offset + sum_d c[d] * src_strides[d]]
// (offsets and strides in elements). A gather (slice: strided source, contiguous destination) and
// a scatter (slice's backward, cat: contiguous source, strided destination) are the same call.
// Distinct coordinates must reach distinct destination elements, so the copy needs no atomics.
// Both backends compute offsets with BlockCopy::offsets, so they cannot drift.
//
//   // y = x[:, 1:5:2] for x [3, 8]: y [3, 2] walks x with strides [8, 2] from offset 1
//   BlockCopy b = plan_block_copy({3, 2}, {8, 2}, 1, {2, 1}, 0, "slice");
#include <cstdint>
#include <vector>

#include "core/hd.h"
#include "core/shape.h"  // kMaxBroadcastDims

namespace ember::kernels {

// CUDA passes a BlockCopy by value, so its dims live in fixed arrays (core/shape.h's limit).
inline constexpr int kMaxBlockDims = static_cast<int>(kMaxBroadcastDims);

struct BlockCopy {
  int dims = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxBlockDims] = {};
  int64_t src_strides[kMaxBlockDims] = {};
  int64_t dst_strides[kMaxBlockDims] = {};
  int64_t src_offset = 0;
  int64_t dst_offset = 0;

  // The source and destination offsets of the block's element `linear` (row-major, last dim fastest).
  EMBER_HD void offsets(int64_t linear, int64_t& src, int64_t& dst) const {
    src = src_offset;
    dst = dst_offset;
    for (int d = dims - 1; d >= 0; --d) {
      const int64_t c = linear % sizes[d];
      linear /= sizes[d];
      src += c * src_strides[d];
      dst += c * dst_strides[d];
    }
  }
};

// The BlockCopy for a block of `sizes` (any rank) with the given strides and offsets. Dims of
// size 1 are dropped and neighbours contiguous on both sides are merged (a permute of a tensor
// with more dims than kMaxBlockDims usually fits); throws naming op when more than
// kMaxBlockDims remain. An empty block has numel 0 and copies nothing.
BlockCopy plan_block_copy(const std::vector<int64_t>& sizes, const std::vector<int64_t>& src_strides, int64_t src_offset,
                     const std::vector<int64_t>& dst_strides, int64_t dst_offset, const char* op);

}  // namespace ember::kernels
