// im2col and col2im (kernels/cpu/im2col.h). Unit-stride convolutions copy whole rows of the
// image with their bounds worked out per column-matrix row; strided ones read zero-padded
// planes (scratch), so every output row is a fixed-stride run with no bounds to check. col2im
// adds each column-matrix row's in-image entries back, bounds worked out per row, any stride.
#include "kernels/cpu/im2col.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/copy_row.h"

namespace ember::kernels::cpu {
namespace {

// Eight and four floats (GCC and Clang vector extensions, compiled for this machine's widest unit).
typedef float Float8 __attribute__((vector_size(32)));
typedef float Float4 __attribute__((vector_size(16)));

// dst[i] = src[2 * i] for N <= count (N = 8 or 4): N at a time, the last N overlapping the ones
// before (same values), so a row as short as a stride-2 layer's 14 or 7 outputs runs no scalar
// tail (its loop's epilogue was most of im2col's time on ResNet-20's downsampling layers). Each
// step reads src[2i, 2i + 2N - 1): the upper half comes from a load at 2i + N - 1, never past
// src[2 (count - 1)].
template <int N>
inline void copy_even_elements(const float* src, float* dst, int64_t count) {
  using V = std::conditional_t<N == 8, Float8, Float4>;
  for (int64_t i = 0;; i += N) {
    i = std::min<int64_t>(i, count - N);
    V lo, hi, even;
    std::memcpy(&lo, src + 2 * i, sizeof lo);
    std::memcpy(&hi, src + 2 * i + N - 1, sizeof hi);
    if constexpr (N == 8) even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 9, 11, 13, 15);
    else even = __builtin_shufflevector(lo, hi, 0, 2, 5, 7);
    std::memcpy(dst + i, &even, sizeof even);
    if (i + N >= count) return;
  }
}

// dst[i] = src[i * stride] for i < count: a constant stride vectorises (2: the even elements of
// two vectors), a run-time one goes element by element.
template <class T>
inline void copy_strided(const T* src, int64_t stride, T* dst, int64_t count) {
  if (stride == 1) {
    copy_row(src, count, dst);
  } else if (stride == 2) {
    if constexpr (std::is_same_v<T, float>) {
      if (count >= 8) return copy_even_elements<8>(src, dst, count);
      if (count >= 4) return copy_even_elements<4>(src, dst, count);
    }
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) dst[i] = src[2 * i];
  } else {
    for (int64_t i = 0; i < count; ++i) dst[i] = src[i * stride];
  }
}

// dst[2 * (i + k)] += src[i + k] for k < N (N = 8 or 4): the N values interleaved with zeros and
// added onto the 2N elements from dst + 2i.
template <int N>
inline void add_to_even_step(const float* src, float* dst, int64_t i) {
  using V = std::conditional_t<N == 8, Float8, Float4>;
  const V zero = {};
  V s, lo, hi;
  std::memcpy(&s, src + i, sizeof s);
  std::memcpy(&lo, dst + 2 * i, sizeof lo);
  std::memcpy(&hi, dst + 2 * i + N, sizeof hi);
  if constexpr (N == 8) {
    lo += __builtin_shufflevector(s, zero, 0, 8, 1, 9, 2, 10, 3, 11);
    hi += __builtin_shufflevector(s, zero, 4, 12, 5, 13, 6, 14, 7, 15);
  } else {
    lo += __builtin_shufflevector(s, zero, 0, 4, 1, 5);
    hi += __builtin_shufflevector(s, zero, 2, 6, 3, 7);
  }
  std::memcpy(dst + 2 * i, &lo, sizeof lo);
  std::memcpy(dst + 2 * i + N, &hi, sizeof hi);
}

// dst[2 * i] += src[i] eight (then four) at a time, for i up to the last eight (four) that end
// before the row's last element (so dst is touched only where the scalar loop would: between
// the even elements it adds zero); returns where it stopped. The compiler's own code for the
// strided loop extracted and stored one lane at a time (col2im's stride-2 rows: 2.1% of a
// ResNet-20 step before, 1.3% after).
inline int64_t add_to_even_elements(const float* src, float* dst, int64_t count) {
  int64_t i = 0;
  for (; i + 8 < count; i += 8) add_to_even_step<8>(src, dst, i);
  if (i + 4 < count) {  // four more (a 7-wide row's first four)
    add_to_even_step<4>(src, dst, i);
    i += 4;
  }
  return i;
}

// dst[i * stride] += src[i] for i < count.
template <class T>
inline void add_strided(const T* src, int64_t stride, T* dst, int64_t count) {
  if (stride == 1) {
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) dst[i] += src[i];
  } else if (stride == 2) {
    int64_t i = 0;
    if constexpr (std::is_same_v<T, float>) i = add_to_even_elements(src, dst, count);
    for (; i < count; ++i) dst[2 * i] += src[i];
  } else {
    for (int64_t i = 0; i < count; ++i) dst[i * stride] += src[i];
  }
}

bool strided(const Conv2dGeometry& g) { return g.stride_h != 1 || g.stride_w != 1; }
bool padded(const Conv2dGeometry& g) { return g.pad_h != 0 || g.pad_w != 0; }

// ceil(a / b) for b > 0 and any sign of a.
int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// The outputs o whose input index o*stride + offset lies inside [0, in_size).
struct ValidRange {
  int64_t begin, end;
};
ValidRange valid_outputs(int64_t offset, int64_t stride, int64_t in_size, int64_t out_size) {
  const int64_t begin = std::clamp<int64_t>(ceil_div(-offset, stride), 0, out_size);
  const int64_t end = std::clamp<int64_t>(ceil_div(in_size - offset, stride), begin, out_size);
  return {begin, end};
}

// One row (c, kh, kw) of an image's column matrix [C*KH*KW, OH*OW]: the output rows and
// columns whose input lies inside the image (the rest read zero padding), and the input
// offset that output (oh.begin, 0) maps to, so output (oh, ow) in range reads input
// src + (oh - oh.begin) * stride_h * W + ow * stride_w. (conv_geometry.h's im2col_source states
// the same mapping per element; the tests check the two against each other.)
struct ColumnRow {
  int64_t index;
  ValidRange oh, ow;
  int64_t src;
};

template <class Fn>
void for_each_column_row(const Conv2dGeometry& g, const Fn& fn) {
  for (int64_t c = 0; c < g.in_channels; ++c)
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t h_off = kh * g.dilation_h - g.pad_h, w_off = kw * g.dilation_w - g.pad_w;
        const ValidRange oh = valid_outputs(h_off, g.stride_h, g.in_h, g.out_h);
        const ValidRange ow = valid_outputs(w_off, g.stride_w, g.in_w, g.out_w);
        const int64_t src = (c * g.in_h + oh.begin * g.stride_h + h_off) * g.in_w + w_off;
        fn(ColumnRow{(c * g.kernel_h + kh) * g.kernel_w + kw, oh, ow, src});
      }
}

// Output row oh of column-matrix row r: the input row it reads, zero where that lies in the padding.
template <class T>
void write_output_row(const Conv2dGeometry& g, const T* image, const ColumnRow& r, int64_t oh, T* out) {
  const int64_t out_w = g.out_w;
  if (oh < r.oh.begin || oh >= r.oh.end || r.ow.begin == r.ow.end) {
    std::fill(out, out + out_w, T(0));
    return;
  }
  for (int64_t ow = 0; ow < r.ow.begin; ++ow) out[ow] = T(0);
  for (int64_t ow = r.ow.end; ow < out_w; ++ow) out[ow] = T(0);
  // start at the first in-image column: r.src itself may lie before the image
  const T* in = image + (r.src + (oh - r.oh.begin) * g.in_w + r.ow.begin);
  copy_strided(in, 1, out + r.ow.begin, r.ow.end - r.ow.begin);
}

// Writes one image's column matrix [C*KH*KW, OH*OW] for a unit-stride convolution. Three ways,
// fastest first:
//   - a "same" convolution (unit strides, output as wide as the input) reads consecutive input
//     rows for consecutive output rows: a row's whole valid block is one contiguous copy, after
//     which only the padding columns at each output row's edges need zeroing;
//   - with unit stride and dilation down the rows, row (c, kh, kw) is row (c, kh - 1, kw) moved
//     up by one output row, plus the output row entering at the bottom: one contiguous copy and
//     one short row instead of OH short rows (LeNet-5's 5x5 layer at 10x10: 5x fewer copies);
//   - otherwise each output row of each column-matrix row separately.
template <class T>
void im2col_unit_stride(const Conv2dGeometry& g, const T* image, T* cols) {
  const int64_t out_w = g.out_w, plane = g.col_cols();
  const bool contiguous = g.stride_h == 1 && g.stride_w == 1 && out_w == g.in_w;
  const bool shifted = g.stride_h == 1 && g.dilation_h == 1 && g.out_h > 1;
  for_each_column_row(g, [&](const ColumnRow& r) {
    T* row = cols + r.index * plane;
    if (contiguous) {
      std::fill(row, row + r.oh.begin * out_w, T(0));
      std::fill(row + r.oh.end * out_w, row + plane, T(0));
      if (r.oh.begin == r.oh.end || r.ow.begin == r.ow.end) {
        std::fill(row + r.oh.begin * out_w, row + r.oh.end * out_w, T(0));
        return;
      }
      const int64_t first = r.oh.begin * out_w + r.ow.begin, last = (r.oh.end - 1) * out_w + r.ow.end;
      std::memcpy(row + first, image + (r.src + r.ow.begin), static_cast<size_t>(last - first) * sizeof(T));
      for (int64_t oh = r.oh.begin; oh < r.oh.end; ++oh) {
        for (int64_t ow = 0; ow < r.ow.begin; ++ow) row[oh * out_w + ow] = T(0);
        for (int64_t ow = r.ow.end; ow < out_w; ++ow) row[oh * out_w + ow] = T(0);
      }
      return;
    }
    if (shifted && (r.index / g.kernel_w) % g.kernel_h != 0) {  // kh > 0: row (c, kh - 1, kw) is kernel_w rows up
      const int64_t tail = plane - out_w;
      std::memcpy(row, row - g.kernel_w * plane + out_w, static_cast<size_t>(tail) * sizeof(T));
      write_output_row(g, image, r, g.out_h - 1, row + tail);
      return;
    }
    for (int64_t oh = 0; oh < g.out_h; ++oh) write_output_row(g, image, r, oh, row + oh * out_w);
  });
}

// Strided convolutions read zero-padded planes [C, H + 2 pad_h, W + 2 pad_w] (the image itself
// when there is no padding): output (oh, ow) of tap (kh, kw) is element (oh * stride_h +
// kh * dilation_h, ow * stride_w + kw * dilation_w) of its channel's plane, always inside it.
// Where kh * dilation_h - stride_h is itself a tap's row offset (a 3x3 kernel at stride 2: kh = 2
// reads the rows kh = 0 reads one output row later), its column-matrix row is that tap's moved up
// by one output row, one contiguous copy, and only its last output row is gathered; likewise
// across (kw = 2 reads what kw = 0 reads one output column later): that tap's row moved left by
// one element, and each output row's last element read. (Gathering every second element is a
// shuffle per vector: ResNet-20's stride-2 layers spent ~40% of their forward in im2col.)
template <class T>
void im2col_strided(const Conv2dGeometry& g, const T* image, T* cols, T* scratch) {
  const T* src = image;
  int64_t h = g.in_h, w = g.in_w;
  if (padded(g)) {  // the interior; the borders stay zero from the caller's first fill
    h = g.in_h + 2 * g.pad_h;
    w = g.in_w + 2 * g.pad_w;
    for (int64_t c = 0; c < g.in_channels; ++c)
      for (int64_t y = 0; y < g.in_h; ++y)
        copy_row(image + (c * g.in_h + y) * g.in_w, g.in_w, scratch + (c * h + y + g.pad_h) * w + g.pad_w);
    src = scratch;
  }
  const int64_t plane = g.col_cols(), row_step = g.stride_h * w, out_w = g.out_w;
  // the taps up (left) whose rows tap (kh, kw)'s are, one output row (column) on; 0: none
  const int64_t reuse_h = g.stride_h % g.dilation_h == 0 ? g.stride_h / g.dilation_h : 0;
  const int64_t reuse_w = g.stride_w % g.dilation_w == 0 ? g.stride_w / g.dilation_w : 0;
  for (int64_t c = 0; c < g.in_channels; ++c)
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const T* in = src + (c * h + kh * g.dilation_h) * w + kw * g.dilation_w;
        T* row = cols + ((c * g.kernel_h + kh) * g.kernel_w + kw) * plane;
        int64_t oh = 0;
        if (reuse_h > 0 && kh >= reuse_h && g.out_h > 1) {
          const T* above = row - reuse_h * g.kernel_w * plane;
          std::memcpy(row, above + out_w, static_cast<size_t>(plane - out_w) * sizeof(T));
          oh = g.out_h - 1;
        } else if (reuse_w > 0 && kw >= reuse_w && out_w > 1) {
          const T* left = row - reuse_w * plane;
          std::memcpy(row, left + 1, static_cast<size_t>(plane - 1) * sizeof(T));
          for (int64_t r = 0; r < g.out_h; ++r) row[r * out_w + out_w - 1] = in[r * row_step + (out_w - 1) * g.stride_w];
          continue;
        }
        for (; oh < g.out_h; ++oh) copy_strided(in + oh * row_step, g.stride_w, row + oh * out_w, out_w);
      }
}

}  // namespace

int64_t im2col_scratch(const Conv2dGeometry& g) {
  return strided(g) && padded(g) ? g.in_channels * (g.in_h + 2 * g.pad_h) * (g.in_w + 2 * g.pad_w) : 0;
}

template <class T>
void im2col(const Conv2dGeometry& g, const T* image, T* cols, T* scratch) {
  if (strided(g)) im2col_strided(g, image, cols, scratch);
  else im2col_unit_stride(g, image, cols);
}

// Each row's in-image entries added where they came from, any stride: the entries that came from
// the padding are never read, so no zero-padded plane is summed into and copied back. An
// element's entries come in the order of the column matrix's rows, (c, kh, kw), as they did into
// that plane: the same sums, bit for bit, and the same time (ResNet-20's stride-2 input
// gradients, bench_conv, one thread, seven interleaved runs each).
template <class T>
void col2im_add(const Conv2dGeometry& g, const T* cols, T* image) {
  const int64_t plane = g.col_cols(), row_step = g.stride_h * g.in_w;
  for_each_column_row(g, [&](const ColumnRow& r) {
    const T* row = cols + r.index * plane + r.ow.begin;
    for (int64_t oh = r.oh.begin; oh < r.oh.end; ++oh) {  // from the first in-image column
      T* out = image + (r.src + (oh - r.oh.begin) * row_step + r.ow.begin * g.stride_w);
      add_strided(row + oh * g.out_w, g.stride_w, out, r.ow.end - r.ow.begin);
    }
  });
}

template void im2col<float>(const Conv2dGeometry&, const float*, float*, float*);
template void im2col<double>(const Conv2dGeometry&, const double*, double*, double*);
template void col2im_add<float>(const Conv2dGeometry&, const float*, float*);
template void col2im_add<double>(const Conv2dGeometry&, const double*, double*);

}  // namespace ember::kernels::cpu
