// CUDA block copy (kernels/block_copy.h): any dtype, by element width. One thread per element
// of the block (grid-stride), its two offsets from BlockCopy::offsets, the same index math as
// the CPU's. Consecutive threads walk the innermost dim, so the side with stride 1 is coalesced.
#include <cstdint>

#include "kernels/block_copy.h"
#include "kernels/cuda/device_utils.cuh"
#include "kernels/ops.h"

namespace ember::kernels::cuda {

#include "kernels/backend_into.inc"

namespace {

template <class T>
__global__ void copy_block_kernel(const T* __restrict__ src, T* __restrict__ dst, BlockCopy b) {
  for (int64_t i = thread_index(); i < b.numel; i += thread_count()) {
    int64_t s = 0, d = 0;
    b.offsets(i, s, d);
    dst[d] = src[s];
  }
}

template <class T>
void launch_copy_block(const Tensor& src, const BlockCopy& b, const Tensor& dst) {
  launch_1d("copy_block", b.numel, copy_block_kernel<T>, static_cast<const T*>(src.data_ptr()),
            static_cast<T*>(dst.data_ptr()), b);
}

}  // namespace

void copy_block(const Tensor& src, const BlockCopy& b, const Tensor& dst) {
  switch (src.element_size()) {
    case 1: launch_copy_block<uint8_t>(src, b, dst); break;
    case 2: launch_copy_block<uint16_t>(src, b, dst); break;
    case 4: launch_copy_block<uint32_t>(src, b, dst); break;
    case 8: launch_copy_block<uint64_t>(src, b, dst); break;
    default: EMBER_THROW("copy_block: unsupported element size " << src.element_size() << " of " << src.dtype());
  }
}

}  // namespace ember::kernels::cuda
