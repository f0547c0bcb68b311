// CUDA transpose: a materialised swap of two dims, any dtype and rank. With
// dim0 < dim1 the input is viewed as [outer, A, mid, B, inner] and the output
// is [outer, B, mid, A, inner]. Only bytes move, so the kernels are templated on
// the element width, not the dtype.
//   - mid = inner = 1 (the last two dims: a batch of [A, B] matrices): 32 x 32
//     tiles staged through shared memory, so both the global reads (along B) and
//     the writes (along A) are coalesced; the tile row is padded to 33 so the
//     column-wise shared reads hit 32 different banks.
//   - otherwise one thread per output element, its input index decomposed from
//     the 5-d view (reads are coalesced along `inner` whenever inner is large).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember::kernels::cuda {

namespace {

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // a 32 x 8 block moves a 32 x 32 tile in 4 steps
constexpr int64_t kMaxGridYZ = 65535;

// out[m][c][r] = in[m][r][c] for `batch` matrices of [rows, cols].
template <class T>
__global__ void transpose_tiled_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t batch, int64_t rows,
                                       int64_t cols) {
  __shared__ T tile[kTile][kTile + 1];
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kTile;
  for (int64_t m = blockIdx.z; m < batch; m += gridDim.z) {
    const T* src = in + m * rows * cols;
    T* dst = out + m * rows * cols;
    for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {
      const int64_t r0 = rt * kTile;
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const int64_t r = r0 + i, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * cols + c];
      }
      __syncthreads();
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const int64_t c = c0 + i, r = r0 + threadIdx.x;  // output row c, output column r
        if (c < cols && r < rows) dst[c * rows + r] = tile[threadIdx.x][i];
      }
      __syncthreads();  // the next tile overwrites this one
    }
  }
}

// One thread per output element of [outer, B, mid, A, inner].
template <class T>
__global__ void transpose_generic_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t total, int64_t a,
                                         int64_t mid, int64_t b, int64_t inner) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t t = idx;
    const int64_t e = t % inner;
    t /= inner;
    const int64_t i = t % a;  // position along A
    t /= a;
    const int64_t md = t % mid;
    t /= mid;
    const int64_t j = t % b;  // position along B
    const int64_t o = t / b;
    out[idx] = in[(((o * a + i) * mid + md) * b + j) * inner + e];
  }
}

template <class T>
void launch_transpose(const void* in, void* out, int64_t total, int64_t outer, int64_t a, int64_t mid, int64_t b,
                      int64_t inner) {
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  if (mid == 1 && inner == 1) {
    const int64_t col_tiles = (b + kTile - 1) / kTile;
    const int64_t row_tiles = (a + kTile - 1) / kTile;
    EMBER_CHECK(col_tiles <= 0x7fffffffLL, "transpose: " << b << " columns are too many for one launch");
    const dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min(row_tiles, kMaxGridYZ)),
                    static_cast<unsigned>(std::min(outer, kMaxGridYZ)));
    transpose_tiled_kernel<T><<<grid, dim3(kTile, kTileRows), 0, current_stream()>>>(src, dst, outer, a, b);
  } else {
    transpose_generic_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, current_stream()>>>(src, dst, total, a, mid,
                                                                                             b, inner);
  }
  EMBER_CUDA_CHECK_LAUNCH("transpose");
}

}  // namespace

void transpose(const Tensor& x, const TransposeLayout& t, const Tensor& y) {
  const int64_t outer = t.outer, a = t.a, mid = t.mid, b = t.b, inner = t.inner;
  switch (x.element_size()) {
    case 1: launch_transpose<uint8_t>(x.data_ptr(), y.data_ptr(), x.numel(), outer, a, mid, b, inner); break;
    case 2: launch_transpose<uint16_t>(x.data_ptr(), y.data_ptr(), x.numel(), outer, a, mid, b, inner); break;
    case 4: launch_transpose<uint32_t>(x.data_ptr(), y.data_ptr(), x.numel(), outer, a, mid, b, inner); break;
    case 8: launch_transpose<uint64_t>(x.data_ptr(), y.data_ptr(), x.numel(), outer, a, mid, b, inner); break;
    default: EMBER_THROW("transpose: unsupported element size " << x.element_size() << " of " << x.dtype());
  }
}

}  // namespace ember::kernels::cuda
