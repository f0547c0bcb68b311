// CPU transpose: a materialised swap of two dims, any dtype and rank. With
// dim0 < dim1 the input is viewed as [outer, A, mid, B, inner] and the output is
// [outer, B, mid, A, inner]. When mid and inner are 1 (the last two dims of a
// matrix or a batch of matrices) it is a batched 2-D transpose, done in square
// tiles so both the reads and the writes stay in cache; otherwise whole `inner`
// runs are copied.
#include <algorithm>
#include <vector>

#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

#include "kernels/backend_api.inc"

namespace {

// 32 x 32 elements of 8 bytes is 8 KiB in and 8 KiB out: both tiles fit in L1.
constexpr int64_t kTile = 32;

// out[c, r] = in[r, c] for each of `batch` [rows, cols] matrices.
template <class T>
void transpose_matrices(const T* in, T* out, int64_t batch, int64_t rows, int64_t cols) {
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t tiles = batch * row_tiles;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (kTile * std::max<int64_t>(cols, 1)));
  parallel_for(tiles, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t matrix = t / row_tiles;
      const int64_t r0 = (t % row_tiles) * kTile, r1 = std::min(rows, r0 + kTile);
      const T* src = in + matrix * rows * cols;
      T* dst = out + matrix * rows * cols;
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
      }
    }
  });
}

// The general case: one output row (o, j, m) gathers A runs of `inner` elements.
template <class T>
void transpose_runs(const T* in, T* out, int64_t outer, int64_t a, int64_t mid, int64_t b, int64_t inner) {
  const int64_t out_rows = outer * b * mid;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, a * inner));
  parallel_for(out_rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t m = row % mid, j = (row / mid) % b, o = row / (mid * b);
      T* dst = out + row * a * inner;
      for (int64_t i = 0; i < a; ++i) {
        const T* src = in + (((o * a + i) * mid + m) * b + j) * inner;
        std::copy(src, src + inner, dst + i * inner);
      }
    }
  });
}

}  // namespace

void transpose(const Tensor& x, const TransposeLayout& t, const Tensor& y) {
  const int64_t outer = t.outer, a = t.a, mid = t.mid, b = t.b, inner = t.inner;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (mid == 1 && inner == 1) transpose_matrices(x.data<T>(), y.data<T>(), outer, a, b);
    else transpose_runs(x.data<T>(), y.data<T>(), outer, a, mid, b, inner);
  });
}

}  // namespace ember::kernels::cpu
