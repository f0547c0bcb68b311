// Builds a BlockCopy (kernels/block_copy.h): drops size-1 dims, merges contiguous neighbours.
#include "kernels/block_copy.h"

#include "core/error.h"

namespace ember::kernels {

BlockCopy plan_block_copy(const std::vector<int64_t>& sizes, const std::vector<int64_t>& src_strides, int64_t src_offset,
                     const std::vector<int64_t>& dst_strides, int64_t dst_offset, const char* op) {
  BlockCopy b;
  b.src_offset = src_offset;
  b.dst_offset = dst_offset;
  b.numel = Shape(sizes).numel();
  if (b.numel == 0) return b;
  std::vector<int64_t> kept_sizes, kept_src, kept_dst;  // outermost first
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    const bool merges = !kept_sizes.empty() && kept_src.back() == src_strides[d] * sizes[d] &&
                        kept_dst.back() == dst_strides[d] * sizes[d];
    if (merges) {  // the kept outer dim steps over exactly this one on both sides
      kept_sizes.back() *= sizes[d];
      kept_src.back() = src_strides[d];
      kept_dst.back() = dst_strides[d];
    } else {
      kept_sizes.push_back(sizes[d]);
      kept_src.push_back(src_strides[d]);
      kept_dst.push_back(dst_strides[d]);
    }
  }
  EMBER_CHECK(kept_sizes.size() <= static_cast<size_t>(kMaxBlockDims),
              op << ": the copy walks " << kept_sizes.size() << " non-contiguous dims of " << Shape(sizes)
                 << ", more than the " << kMaxBlockDims << " both backends support");
  b.dims = static_cast<int>(kept_sizes.size());
  for (int d = 0; d < b.dims; ++d) {
    b.sizes[d] = kept_sizes[static_cast<size_t>(d)];
    b.src_strides[d] = kept_src[static_cast<size_t>(d)];
    b.dst_strides[d] = kept_dst[static_cast<size_t>(d)];
  }
  return b;
}

}  // namespace ember::kernels
