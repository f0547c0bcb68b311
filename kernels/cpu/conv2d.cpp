// CPU conv2d, forward and backward, NCHW, groups = 1. Three algorithms (kernels/providers.h,
// EMBER_CPU_CONV): 3x3 stride-1 layers with >= 16 channels in and out run Winograd
// F(2x2, 3x3) (kernels/cpu/conv2d_winograd.h); other stride-1 f32 layers with fewer than 16
// input channels run the direct convolution (kernels/cpu/conv2d_direct.h: forward and weight
// gradient) when the CPU has AVX2 or AVX-512; everything else runs im2col + GEMM, whose
// policy is:
//   - im2col per image into a per-thread column buffer [C*KH*KW, OH*OW], then one
//     GEMM per image through Eigen maps (EIGEN_USE_BLAS: an OpenBLAS sgemm/dgemm):
//       forward      y[n]    = W [OC, CKK] * cols[n]          (+ bias per row)
//       weight grad  dW     += dy[n] [OC, P] * cols[n]^T      (one partial dW per thread)
//       input grad   dcols   = W^T * dy[n], then col2im adds dcols into dx[n]
//   - images are split into one contiguous range per OpenMP thread; BLAS runs
//     single-threaded inside them (OpenBLAS's OpenMP build checks omp_in_parallel),
//     so two cores never fight over one small GEMM. One image uses BLAS's threads.
//   - im2col of a "same" convolution (unit strides, output as wide as the input) copies
//     each column-matrix row as one block, then zeroes the padding columns.
//   - a 1x1, stride-1, unpadded kernel skips im2col: the image is its column matrix.
//   - column buffers come from memory/ as workspace, not from the stack or malloc.
//   - f16 is a storage type: widened to f32, convolved, narrowed back.
// Index math shared with CUDA is kernels/conv_geometry.h. Measured on the 2-core dev
// machine (1 thread, batch 64): GEMMs are ~75% of the time, im2col/col2im ~15%.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593 in Eigen's AVX-512 code
#endif
#include <Eigen/Core>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/simulation.h"
#include "kernels/cpu/conv2d_direct.h"
#include "kernels/cpu/conv2d_winograd.h"
#include "kernels/cpu/f16_storage.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"
#include "kernels/providers.h"
#include "memory/scopes.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

#include "kernels/backend_api.inc"
#include "kernels/backend_into.inc"

namespace {

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatrixMap = Eigen::Map<RowMatrix<T>>;
template <class T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>>;

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
  const int64_t out_w = g.out_w, sw = g.stride_w;
  if (oh < r.oh.begin || oh >= r.oh.end || r.ow.begin == r.ow.end) {
    std::fill(out, out + out_w, T(0));
    return;
  }
  for (int64_t ow = 0; ow < r.ow.begin; ++ow) out[ow] = T(0);
  for (int64_t ow = r.ow.end; ow < out_w; ++ow) out[ow] = T(0);
  // start at the first in-image column: r.src itself may lie before the image
  const T* in = image + (r.src + (oh - r.oh.begin) * g.stride_h * g.in_w + r.ow.begin * sw);
  T* seg = out + r.ow.begin;
  const int64_t count = r.ow.end - r.ow.begin;
  if (sw == 1) {  // unit stride vectorises; a run-time stride would gather element by element
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) seg[i] = in[i];
  } else {
    for (int64_t i = 0; i < count; ++i) seg[i] = in[i * sw];
  }
}

// Writes one image's column matrix [C*KH*KW, OH*OW]. Three ways, fastest first:
//   - a "same" convolution (unit strides, output as wide as the input) reads consecutive input
//     rows for consecutive output rows: a row's whole valid block is one contiguous copy, after
//     which only the padding columns at each output row's edges need zeroing;
//   - with unit stride and dilation down the rows, row (c, kh, kw) is row (c, kh - 1, kw) moved
//     up by one output row, plus the output row entering at the bottom: one contiguous copy and
//     one short row instead of OH short rows (LeNet-5's 5x5 layer at 10x10: 5x fewer copies);
//   - otherwise each output row of each column-matrix row separately.
template <class T>
void im2col(const Conv2dGeometry& g, const T* image, T* cols) {
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

// Adds every column-matrix entry back onto the input element it was copied from (the
// transpose of im2col: padding entries are dropped).
template <class T>
void col2im_add(const Conv2dGeometry& g, const T* cols, T* image) {
  const int64_t out_w = g.out_w, plane = g.col_cols(), sw = g.stride_w, row_step = g.stride_h * g.in_w;
  for_each_column_row(g, [&](const ColumnRow& r) {
    const T* row = cols + r.index * plane;
    for (int64_t oh = r.oh.begin; oh < r.oh.end; ++oh) {
      const T* in = row + oh * out_w + r.ow.begin;
      T* out = image + (r.src + (oh - r.oh.begin) * row_step + r.ow.begin * sw);  // first in-image column
      const int64_t count = r.ow.end - r.ow.begin;
      if (sw == 1) {
#pragma omp simd
        for (int64_t i = 0; i < count; ++i) out[i] += in[i];
      } else {
        for (int64_t i = 0; i < count; ++i) out[i * sw] += in[i];
      }
    }
  });
}

// How a batch is cut: each OpenMP thread takes one contiguous range of images (a chunk) with
// its own column buffer [CKK, P] (P = OH*OW), and runs one GEMM per image. Grouping several
// images into one wider GEMM was measured and gained nothing: OpenBLAS's small-matrix kernels
// already run products of 50-100 columns near peak, and the gather/scatter costs copies.
struct ConvPlan {
  int64_t batch, chunks;
  int64_t rows, pixels, out_channels;  // CKK, P, OC
  bool direct;                         // pointwise kernel: the image is its own column matrix
};

ConvPlan plan_for(const Conv2dGeometry& g) {
  return ConvPlan{g.batch,        std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), g.batch)),
                  g.col_rows(),   g.col_cols(),
                  g.out_channels, g.is_pointwise()};
}

// Per-thread column buffers (undefined when no im2col is needed).
Tensor column_workspace(const ConvPlan& p, DType dtype) {
  if (p.direct) return Tensor();
  CategoryScope scope(MemoryCategory::workspace);
  return empty(Shape{p.chunks, p.rows, p.pixels}, TensorOptions().dtype(dtype));
}

// Calls fn(chunk, cols, image) for every image, the images of one chunk in order on one
// thread; cols is that chunk's column buffer (null when direct).
template <class T, class Fn>
void for_each_image(const ConvPlan& p, const Tensor& workspace, const Fn& fn) {
  parallel_for(p.chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t chunk = c0; chunk < c1; ++chunk) {
      T* cols = workspace.defined() ? workspace.data<T>() + chunk * p.rows * p.pixels : nullptr;
      const int64_t end = p.batch * (chunk + 1) / p.chunks;
      for (int64_t n = p.batch * chunk / p.chunks; n < end; ++n) fn(chunk, cols, n);
    }
  });
}

// Whether this convolution runs as Winograd F(2x2, 3x3) (kernels/providers.h: EMBER_CPU_CONV).
bool use_winograd(const Conv2dGeometry& g) {
  switch (cpu_conv_algorithm()) {
    case CpuConvAlgorithm::im2col:
    case CpuConvAlgorithm::direct: return false;
    case CpuConvAlgorithm::winograd: return winograd_applies(g);
    case CpuConvAlgorithm::automatic: break;
  }
  return winograd_pays(g);
}

// Whether this convolution runs as the direct convolution (f32 only: kernels/cpu/conv2d_direct.h).
template <class T>
bool use_direct(const Conv2dGeometry& g) {
  if (!std::is_same_v<T, float>) return false;
  switch (cpu_conv_algorithm()) {
    case CpuConvAlgorithm::im2col:
    case CpuConvAlgorithm::winograd: return false;
    case CpuConvAlgorithm::direct: return direct_applies(g);
    case CpuConvAlgorithm::automatic: break;
  }
  return !winograd_pays(g) && direct_pays(g);
}

template <class T>
void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                    const Tensor& y) {
  if (use_winograd(g)) {
    conv2d_winograd<T>(g, x, weight, bias, y);
    return;
  }
  if constexpr (std::is_same_v<T, float>)
    if (use_direct<T>(g)) {
      conv2d_direct(g, x, weight, bias, y);
      return;
    }
  const ConvPlan p = plan_for(g);
  const Tensor workspace = column_workspace(p, x.dtype());
  if (simulating()) return;
  const ConstMatrixMap<T> w(weight.data<T>(), p.out_channels, p.rows);
  const int64_t image_size = g.in_channels * g.in_plane();
  for_each_image<T>(p, workspace, [&](int64_t, T* cols, int64_t n) {
    const T* x_n = x.data<T>() + n * image_size;
    if (!p.direct) im2col(g, x_n, cols);
    MatrixMap<T> out(y.data<T>() + n * p.out_channels * p.pixels, p.out_channels, p.pixels);
    if (p.rows == 0) out.setZero();  // an empty sum (no input channels)
    else out.noalias() = w * ConstMatrixMap<T>(p.direct ? x_n : cols, p.rows, p.pixels);
    if (bias.defined()) out.colwise() += Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(bias.data<T>(), p.out_channels);
  });
}

// A "same" convolution (unit stride and dilation, padding (K-1)/2) has the same geometry as
// its input gradient: dx = conv(dy, W') with W'[c][oc] = W[oc][c] flipped in both axes and
// the same padding. That form runs the forward's im2col block copies over dy's OC channels
// and writes dx straight from the GEMM, instead of a scatter-add col2im over C channels into
// a zeroed dx; the FLOPs are the same. Under im2col it wins when OC <= C (~5-10% on the
// ConvNet's 32->32 and 64->64 layers) and loses when OC > C (twice the rows to copy); a 3x3
// kernel whose flipped convolution runs as Winograd takes it whatever the channels.
bool input_grad_as_same_conv(const Conv2dGeometry& g) {
  if (!(g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 && g.dilation_w == 1 &&
        2 * g.pad_h == g.kernel_h - 1 && 2 * g.pad_w == g.kernel_w - 1 && !g.is_pointwise()))
    return false;
  Conv2dGeometry flipped = g;  // dy [N, OC, OH, OW] convolved with W' [C, OC, KH, KW]
  std::swap(flipped.in_channels, flipped.out_channels);
  std::swap(flipped.in_h, flipped.out_h);
  std::swap(flipped.in_w, flipped.out_w);
  return g.out_channels <= g.in_channels || use_winograd(flipped);
}

template <class T>
Tensor flipped_transposed_weight(const Conv2dGeometry& g, const Tensor& weight) {
  CategoryScope scope(MemoryCategory::workspace);
  Tensor out = empty(Shape{g.in_channels, g.out_channels, g.kernel_h, g.kernel_w}, TensorOptions().dtype(weight.dtype()));
  if (simulating()) return out;
  const T* w = weight.data<T>();
  T* o = out.data<T>();
  const int64_t taps = g.kernel_h * g.kernel_w;
  for (int64_t oc = 0; oc < g.out_channels; ++oc)
    for (int64_t c = 0; c < g.in_channels; ++c)
      for (int64_t t = 0; t < taps; ++t) o[(c * g.out_channels + oc) * taps + (taps - 1 - t)] = w[(oc * g.in_channels + c) * taps + t];
  return out;
}

template <class T>
void conv2d_input_grad(const Conv2dGeometry& g, const Tensor& dy, const Tensor& weight, const Tensor& dx) {
  if (input_grad_as_same_conv(g)) {
    const Tensor w_flipped = flipped_transposed_weight<T>(g, weight);
    const Conv2dArgs same{1, Size2(g.pad_h, g.pad_w), 1};
    conv2d_forward<T>(conv2d_geometry(dy.shape(), w_flipped.shape(), same, "conv2d_backward_input"), dy, w_flipped,
                      Tensor(), dx);
    return;
  }
  const ConvPlan p = plan_for(g);
  const Tensor workspace = column_workspace(p, dy.dtype());
  if (simulating()) return;
  const ConstMatrixMap<T> w(weight.data<T>(), p.out_channels, p.rows);
  const int64_t image_size = g.in_channels * g.in_plane();
  for_each_image<T>(p, workspace, [&](int64_t, T* cols, int64_t n) {
    T* dx_n = dx.data<T>() + n * image_size;
    const ConstMatrixMap<T> grad(dy.data<T>() + n * p.out_channels * p.pixels, p.out_channels, p.pixels);
    MatrixMap<T>(p.direct ? dx_n : cols, p.rows, p.pixels).noalias() = w.transpose() * grad;
    if (p.direct) return;
    std::fill(dx_n, dx_n + image_size, T(0));
    col2im_add(g, cols, dx_n);
  });
}

template <class T>
void conv2d_weight_grad(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, const Tensor& dw) {
  if (use_winograd(g)) {
    conv2d_winograd_weight_grad<T>(g, x, dy, dw);
    return;
  }
  if constexpr (std::is_same_v<T, float>)
    if (use_direct<T>(g)) {
      conv2d_direct_weight_grad(g, x, dy, dw);
      return;
    }
  const ConvPlan p = plan_for(g);
  const Tensor workspace = column_workspace(p, x.dtype());
  const int64_t oc = p.out_channels, image_size = g.in_channels * g.in_plane();
  Tensor partial = dw;  // one [OC, CKK] accumulator per chunk; chunk 0 is dw itself
  if (p.chunks > 1) {
    CategoryScope scope(MemoryCategory::workspace);
    partial = empty(Shape{p.chunks, oc, p.rows}, TensorOptions().dtype(dw.dtype()));
  }
  if (simulating()) return;
  fill_(partial, 0.0);
  for_each_image<T>(p, workspace, [&](int64_t chunk, T* cols, int64_t n) {
    const T* x_n = x.data<T>() + n * image_size;
    if (!p.direct) im2col(g, x_n, cols);
    const ConstMatrixMap<T> grad(dy.data<T>() + n * oc * p.pixels, oc, p.pixels);
    MatrixMap<T>(partial.data<T>() + chunk * oc * p.rows, oc, p.rows).noalias() +=
        grad * ConstMatrixMap<T>(p.direct ? x_n : cols, p.rows, p.pixels).transpose();
  });
  if (p.chunks > 1) {  // chunks are summed in chunk order: deterministic for a given thread count
    T* out = dw.data<T>();
    const T* part = partial.data<T>();
    const int64_t size = oc * p.rows;
    std::copy(part, part + size, out);
    for (int64_t c = 1; c < p.chunks; ++c)
      for (int64_t i = 0; i < size; ++i) out[i] += part[c * size + i];
  }
}

// The geometry of `count` images of g's batch (the f16 path's chunks).
Conv2dGeometry images_of(Conv2dGeometry g, int64_t count) {
  g.batch = count;
  return g;
}

}  // namespace

void conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dGeometry& g, const Tensor& y) {
  if (x.dtype() == DType::f16) {
    const Tensor w = widened(weight), b = widened(bias);
    computed_in_f32_by_images(y, [&](int64_t begin, int64_t count, const Tensor& y32) {
      cpu::conv2d(widened(row_view(x, begin, count)), w, b, images_of(g, count), y32);
    });
    return;
  }
  dispatch_floating("conv2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, Half>) conv2d_forward<T>(g, x, weight, bias, y);
  });
}

void conv2d_backward_input(const Tensor& dy, const Tensor& weight, const Conv2dGeometry& g, const Tensor& dx) {
  if (dy.dtype() == DType::f16) {
    const Tensor w = widened(weight);
    computed_in_f32_by_images(dx, [&](int64_t begin, int64_t count, const Tensor& dx32) {
      cpu::conv2d_backward_input(widened(row_view(dy, begin, count)), w, images_of(g, count), dx32);
    });
    return;
  }
  dispatch_floating("conv2d_backward_input", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, Half>) conv2d_input_grad<T>(g, dy, weight, dx);
  });
}

void conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Conv2dGeometry& g, const Tensor& dw) {
  if (x.dtype() == DType::f16) {
    summed_in_f32_by_images(dw, g.batch, [&](int64_t begin, int64_t count, const Tensor& dw32) {
      cpu::conv2d_backward_weight(widened(row_view(x, begin, count)), widened(row_view(dy, begin, count)),
                                  images_of(g, count), dw32);
    });
    return;
  }
  dispatch_floating("conv2d_backward_weight", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, Half>) conv2d_weight_grad<T>(g, x, dy, dw);
  });
}

void conv2d_backward_bias(const Tensor& dy, const Tensor& db) {
  const int64_t batch = dy.size(0), channels = dy.size(1), plane = dy.numel() / std::max<int64_t>(1, batch * channels);
  dispatch_floating("conv2d_backward_bias", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* g = dy.data<T>();
    T* out = db.data<T>();
    parallel_for(channels, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, batch * plane)),
                 [&](int64_t c0, int64_t c1) {
                   for (int64_t c = c0; c < c1; ++c) {
                     double total = 0.0;  // planes summed in C, then in double across the batch
                     for (int64_t n = 0; n < batch; ++n) {
                       const T* p = g + (n * channels + c) * plane;
                       C sum = C(0);
#pragma omp simd reduction(+ : sum)
                       for (int64_t i = 0; i < plane; ++i) sum += C(p[i]);
                       total += static_cast<double>(sum);
                     }
                     out[c] = T(static_cast<C>(total));
                   }
                 });
  });
}

}  // namespace ember::kernels::cpu
