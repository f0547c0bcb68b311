// CPU conv2d, forward and backward, NCHW, groups = 1. Policy:
//   - im2col per image into a per-thread column buffer [C*KH*KW, OH*OW], then one
//     GEMM per image through Eigen maps (EIGEN_USE_BLAS: an OpenBLAS sgemm/dgemm):
//       forward      y[n]    = W [OC, CKK] * cols[n]          (+ bias per row)
//       weight grad  dW     += dy[n] [OC, P] * cols[n]^T      (one partial dW per thread)
//       input grad   dcols   = W^T * dy[n], then col2im adds dcols into dx[n]
//   - images are split into one contiguous range per OpenMP thread; BLAS runs
//     single-threaded inside them (OpenBLAS's OpenMP build checks omp_in_parallel),
//     so two cores never fight over one small GEMM. One image uses BLAS's threads.
//   - a 1x1, stride-1, unpadded kernel skips im2col: the image is its column matrix.
//   - column buffers come from memory/ as workspace, not from the stack or malloc.
//   - f16 is a storage type: widened to f32, convolved, narrowed back.
// Index math shared with CUDA is kernels/conv_geometry.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593 in Eigen's AVX-512 code
#endif
#include <Eigen/Core>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"
#include "memory/category_scope.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

#include "kernels/backend_api.inc"

namespace {

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatrixMap = Eigen::Map<RowMatrix<T>>;
template <class T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>>;

// ceil(a / b) for b > 0 and any sign of a.
int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// The output columns ow whose input column ow*stride + offset lies inside [0, in_w).
struct ValidRange {
  int64_t begin, end;
};
ValidRange valid_outputs(int64_t offset, int64_t stride, int64_t in_size, int64_t out_size) {
  const int64_t begin = std::clamp<int64_t>(ceil_div(-offset, stride), 0, out_size);
  const int64_t end = std::clamp<int64_t>(ceil_div(in_size - offset, stride), begin, out_size);
  return {begin, end};
}

// Walks the column matrix of one image row by row (c, kh, kw) and output row by output row,
// calling visit(col_segment, src_row, ow_range) for segments inside the image and
// pad(col_segment) for output rows that fall entirely in the padding. Both im2col and col2im
// use it, so the two are exact transposes by construction (conv_geometry.h's im2col_source
// states the same mapping per element; the tests check them against each other).
template <class T, class Visit, class Pad>
void walk_columns(const Conv2dGeometry& g, T* cols, const Visit& visit, const Pad& pad) {
  const int64_t out_w = g.out_w, plane = g.col_cols();
  for (int64_t c = 0; c < g.in_channels; ++c) {
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        T* row = cols + ((c * g.kernel_h + kh) * g.kernel_w + kw) * plane;
        const int64_t h_off = kh * g.dilation_h - g.pad_h, w_off = kw * g.dilation_w - g.pad_w;
        const ValidRange ow = valid_outputs(w_off, g.stride_w, g.in_w, out_w);
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const int64_t ih = oh * g.stride_h + h_off;
          T* segment = row + oh * out_w;
          if (ih < 0 || ih >= g.in_h) {
            pad(segment);
          } else {
            visit(segment, (c * g.in_h + ih) * g.in_w + w_off, ow);
          }
        }
      }
    }
  }
}

template <class T>
void im2col(const Conv2dGeometry& g, const T* image, T* cols) {
  const int64_t out_w = g.out_w, stride = g.stride_w;
  walk_columns(
      g, cols,
      [&](T* out, int64_t src_offset, ValidRange ow) {
        // out[i] reads image[src_offset + i * stride] for i in [ow.begin, ow.end)
        std::fill(out, out + ow.begin, T(0));
        const T* src = image + (src_offset + ow.begin * stride);
        if (stride == 1) {
          std::memcpy(out + ow.begin, src, static_cast<size_t>(ow.end - ow.begin) * sizeof(T));
        } else {
          for (int64_t i = 0; i < ow.end - ow.begin; ++i) out[ow.begin + i] = src[i * stride];
        }
        std::fill(out + ow.end, out + out_w, T(0));
      },
      [&](T* out) { std::fill(out, out + out_w, T(0)); });
}

// Adds every column-matrix entry back onto the input element it was copied from.
template <class T>
void col2im_add(const Conv2dGeometry& g, T* cols, T* image) {
  const int64_t stride = g.stride_w;
  walk_columns(
      g, cols,
      [&](T* in, int64_t dst_offset, ValidRange ow) {
        T* dst = image + (dst_offset + ow.begin * stride);
        for (int64_t i = 0; i < ow.end - ow.begin; ++i) dst[i * stride] += in[ow.begin + i];
      },
      [](T*) {});
}

// Splits `batch` images into one contiguous range per thread: fn(chunk, begin, end).
// The chunk index selects that thread's workspace slice.
template <class Fn>
void for_image_chunks(int64_t batch, int64_t chunks, const Fn& fn) {
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) fn(c, batch * c / chunks, batch * (c + 1) / chunks);
  });
}

int64_t image_chunks(int64_t batch) { return std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), batch)); }

// Column buffers for `chunks` threads; undefined when the image is its own column matrix.
Tensor column_workspace(const Conv2dGeometry& g, int64_t chunks, DType dtype) {
  if (g.is_pointwise()) return Tensor();
  CategoryScope scope(MemoryCategory::workspace);
  return empty(Shape{chunks, g.col_rows(), g.col_cols()}, TensorOptions().dtype(dtype));
}

// f16 is computed in f32: widens an (optional) operand.
Tensor widened(const Tensor& t) { return t.defined() && t.dtype() == DType::f16 ? cast(t, DType::f32) : t; }

template <class T>
void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                    const Tensor& y) {
  const int64_t chunks = image_chunks(g.batch);
  const Tensor workspace = column_workspace(g, chunks, x.dtype());
  const int64_t rows = g.col_rows(), cols = g.col_cols();
  const ConstMatrixMap<T> w(weight.data<T>(), g.out_channels, rows);
  const T* b = bias.defined() ? bias.data<T>() : nullptr;
  for_image_chunks(g.batch, chunks, [&](int64_t chunk, int64_t begin, int64_t end) {
    T* buffer = workspace.defined() ? workspace.data<T>() + chunk * rows * cols : nullptr;
    for (int64_t n = begin; n < end; ++n) {
      const T* image = x.data<T>() + n * g.in_channels * g.in_plane();
      if (buffer) im2col(g, image, buffer);
      MatrixMap<T> out(y.data<T>() + n * g.out_channels * cols, g.out_channels, cols);
      if (rows == 0) out.setZero();  // an empty sum (no input channels)
      else out.noalias() = w * ConstMatrixMap<T>(buffer ? buffer : image, rows, cols);
      if (b) out.colwise() += Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(b, g.out_channels);
    }
  });
}

template <class T>
void conv2d_input_grad(const Conv2dGeometry& g, const Tensor& dy, const Tensor& weight, const Tensor& dx) {
  const int64_t chunks = image_chunks(g.batch);
  const Tensor workspace = column_workspace(g, chunks, dy.dtype());
  const int64_t rows = g.col_rows(), cols = g.col_cols(), image_size = g.in_channels * g.in_plane();
  const ConstMatrixMap<T> w(weight.data<T>(), g.out_channels, rows);
  for_image_chunks(g.batch, chunks, [&](int64_t chunk, int64_t begin, int64_t end) {
    T* buffer = workspace.defined() ? workspace.data<T>() + chunk * rows * cols : nullptr;
    for (int64_t n = begin; n < end; ++n) {
      T* image = dx.data<T>() + n * image_size;
      const ConstMatrixMap<T> grad(dy.data<T>() + n * g.out_channels * cols, g.out_channels, cols);
      MatrixMap<T> dcols(buffer ? buffer : image, rows, cols);
      dcols.noalias() = w.transpose() * grad;
      if (buffer) {
        std::fill(image, image + image_size, T(0));
        col2im_add(g, buffer, image);
      }
    }
  });
}

template <class T>
void conv2d_weight_grad(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, const Tensor& dw) {
  const int64_t chunks = image_chunks(g.batch);
  const Tensor workspace = column_workspace(g, chunks, x.dtype());
  const int64_t rows = g.col_rows(), cols = g.col_cols(), oc = g.out_channels;
  Tensor partial = dw;  // one [OC, CKK] accumulator per chunk; chunk 0 is dw itself
  if (chunks > 1) {
    CategoryScope scope(MemoryCategory::workspace);
    partial = empty(Shape{chunks, oc, rows}, TensorOptions().dtype(dw.dtype()));
  }
  for_image_chunks(g.batch, chunks, [&](int64_t chunk, int64_t begin, int64_t end) {
    T* buffer = workspace.defined() ? workspace.data<T>() + chunk * rows * cols : nullptr;
    MatrixMap<T> acc(partial.data<T>() + chunk * oc * rows, oc, rows);
    acc.setZero();
    for (int64_t n = begin; n < end; ++n) {
      const T* image = x.data<T>() + n * g.in_channels * g.in_plane();
      if (buffer) im2col(g, image, buffer);
      const ConstMatrixMap<T> grad(dy.data<T>() + n * oc * cols, oc, cols);
      acc.noalias() += grad * ConstMatrixMap<T>(buffer ? buffer : image, rows, cols).transpose();
    }
  });
  if (chunks > 1) {  // chunks are summed in chunk order: deterministic for a given thread count
    T* out = dw.data<T>();
    const T* p = partial.data<T>();
    const int64_t size = oc * rows;
    std::copy(p, p + size, out);
    for (int64_t c = 1; c < chunks; ++c)
      for (int64_t i = 0; i < size; ++i) out[i] += p[c * size + i];
  }
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dArgs& args) {
  const Conv2dGeometry g = conv2d_geometry(x.shape(), weight.shape(), args, "conv2d");
  if (x.dtype() == DType::f16)
    return cast(cpu::conv2d(widened(x), widened(weight), widened(bias), args), DType::f16);
  Tensor y = empty(Shape{g.batch, g.out_channels, g.out_h, g.out_w}, TensorOptions().dtype(x.dtype()).device(x.device()));
  if (y.numel() == 0) return y;
  dispatch_floating("conv2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, Half>) conv2d_forward<T>(g, x, weight, bias, y);
  });
  return y;
}

Tensor conv2d_backward_input(const Tensor& dy, const Tensor& weight, const Shape& x_shape, const Conv2dArgs& args) {
  const Conv2dGeometry g = conv2d_geometry(x_shape, weight.shape(), args, "conv2d_backward_input");
  if (dy.dtype() == DType::f16)
    return cast(cpu::conv2d_backward_input(widened(dy), widened(weight), x_shape, args), DType::f16);
  Tensor dx = empty(x_shape, TensorOptions().dtype(dy.dtype()).device(dy.device()));
  if (dx.numel() == 0) return dx;
  if (g.out_channels == 0 || g.col_cols() == 0) {
    fill_(dx, 0.0);
    return dx;
  }
  dispatch_floating("conv2d_backward_input", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, Half>) conv2d_input_grad<T>(g, dy, weight, dx);
  });
  return dx;
}

Tensor conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Shape& weight_shape, const Conv2dArgs& args) {
  const Conv2dGeometry g = conv2d_geometry(x.shape(), weight_shape, args, "conv2d_backward_weight");
  if (x.dtype() == DType::f16)
    return cast(cpu::conv2d_backward_weight(widened(x), widened(dy), weight_shape, args), DType::f16);
  Tensor dw = empty(weight_shape, TensorOptions().dtype(x.dtype()).device(x.device()));
  if (dw.numel() == 0) return dw;
  if (g.batch == 0 || g.col_cols() == 0) {
    fill_(dw, 0.0);
    return dw;
  }
  dispatch_floating("conv2d_backward_weight", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, Half>) conv2d_weight_grad<T>(g, x, dy, dw);
  });
  return dw;
}

Tensor conv2d_backward_bias(const Tensor& dy) {
  const int64_t batch = dy.size(0), channels = dy.size(1), plane = dy.numel() / std::max<int64_t>(1, batch * channels);
  Tensor db = empty(Shape{channels}, TensorOptions().dtype(dy.dtype()).device(dy.device()));
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
  return db;
}

}  // namespace ember::kernels::cpu
