// CPU block copy (kernels/block_copy.h): any dtype, by element width. The block is walked
// row by row along its innermost dim; a row whose elements are adjacent on both sides is one
// memcpy. Rows are spread over threads when the block is large.
#include <algorithm>
#include <cstring>

#include "kernels/block_copy.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"

namespace ember::kernels::cpu {

#include "kernels/backend_into.inc"

namespace {

template <class T>
void copy_rows(const T* src, T* dst, const BlockCopy& b) {
  const int64_t row = b.dims == 0 ? 1 : b.sizes[b.dims - 1];
  const int64_t src_step = b.dims == 0 ? 1 : b.src_strides[b.dims - 1];
  const int64_t dst_step = b.dims == 0 ? 1 : b.dst_strides[b.dims - 1];
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / row);
  parallel_for(b.numel / row, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t s = 0, d = 0;
      b.offsets(r * row, s, d);
      if (src_step == 1 && dst_step == 1) {
        std::memcpy(dst + d, src + s, static_cast<size_t>(row) * sizeof(T));
        continue;
      }
      for (int64_t i = 0; i < row; ++i) dst[d + i * dst_step] = src[s + i * src_step];
    }
  });
}

}  // namespace

void copy_block(const Tensor& src, const BlockCopy& b, const Tensor& dst) {
  switch (src.element_size()) {
    case 1: copy_rows(static_cast<const uint8_t*>(src.data_ptr()), static_cast<uint8_t*>(dst.data_ptr()), b); break;
    case 2: copy_rows(static_cast<const uint16_t*>(src.data_ptr()), static_cast<uint16_t*>(dst.data_ptr()), b); break;
    case 4: copy_rows(static_cast<const uint32_t*>(src.data_ptr()), static_cast<uint32_t*>(dst.data_ptr()), b); break;
    case 8: copy_rows(static_cast<const uint64_t*>(src.data_ptr()), static_cast<uint64_t*>(dst.data_ptr()), b); break;
    default: EMBER_THROW("copy_block: unsupported element size " << src.element_size() << " of " << src.dtype());
  }
}

}  // namespace ember::kernels::cpu
