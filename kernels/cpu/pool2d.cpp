// CPU max and average pooling over NCHW planes, forward and backward. Every
// (n, c) plane is independent, so planes are spread over OpenMP threads; within a
// plane the windows come from kernels/conv_geometry.h's pool_window (shared with
// CUDA). Max pooling records each maximum's flat offset h*W + w in its plane (i64,
// like PyTorch), so backward is a scatter that needs neither x nor y. Backward
// scatters stay within one plane, so threads never write the same element.
#include <algorithm>

#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"
#include "kernels/softmax_math.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

#include "kernels/backend_api.inc"

namespace {

// Planes per task: enough work per thread that small pools run inline.
int64_t plane_grain(int64_t plane_work) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, plane_work)); }

Shape pooled_shape(const Conv2dGeometry& g) { return Shape{g.batch, g.in_channels, g.out_h, g.out_w}; }

// The maximum of a window of `rows` x `cols` elements starting at src[first], and where it is
// (the first on ties; a NaN wins, like PyTorch: kernels/softmax_math.h's max_takes). The
// common pass compares with a plain `>`, which compiles to selects; max_takes' NaN test makes
// GCC branch on data-dependent compares, 5x slower on random inputs, so it only reruns
// windows that hold a NaN. kRows/kCols > 0 fix the window at compile time (2x2 is nearly
// every CNN's pooling), giving straight-line code.
template <int64_t kRows, int64_t kCols, class T>
void window_max(const T* src, int64_t in_w, int64_t first, int64_t rows, int64_t cols, T* dst, int64_t* dst_at) {
  using C = compute_t<T>;
  const int64_t nr = kRows > 0 ? kRows : rows, nc = kCols > 0 ? kCols : cols;
  int64_t best_at = first;
  C best = C(src[first]);
  bool has_nan = false;
  for (int64_t h = 0; h < nr; ++h)
    for (int64_t w = 0; w < nc; ++w) {
      const int64_t at = first + h * in_w + w;
      const C v = C(src[at]);
      has_nan |= v != v;
      const int64_t take = -static_cast<int64_t>(v > best);  // all ones or zero: a mask, not a branch
      best = v > best ? v : best;                             // vmaxss
      best_at = (at & take) | (best_at & ~take);
    }
  if (has_nan) {
    best_at = first;
    best = C(src[first]);
    for (int64_t h = 0; h < nr; ++h)
      for (int64_t w = 0; w < nc; ++w) {
        const int64_t at = first + h * in_w + w;
        if (max_takes(C(src[at]), best)) {
          best = C(src[at]);
          best_at = at;
        }
      }
  }
  *dst = T(best);
  *dst_at = best_at;
}

// One output row of max pooling over rows wh of a plane. Outputs whose window lies inside the
// plane's columns take the fixed-size form when the window is 2x2; the border outputs (and
// other sizes) take the run-time form. Both visit a window row by row, so ties resolve alike.
template <class T>
void max_pool_row(const T* src, int64_t in_w, PoolWindow wh, int64_t out_w, int64_t kw, int64_t sw, int64_t pw,
                  T* dst, int64_t* dst_at) {
  const int64_t rows = wh.end - wh.begin;  // non-empty: padding <= kernel/2
  const int64_t lo = std::min(out_w, (pw + sw - 1) / sw);
  const int64_t hi = in_w + pw >= kw ? std::clamp<int64_t>((in_w + pw - kw) / sw + 1, lo, out_w) : lo;
  const bool fixed = rows == 2 && kw == 2;
  for (int64_t ow = 0; ow < out_w; ++ow) {
    if (fixed && ow >= lo && ow < hi) {
      window_max<2, 2>(src, in_w, wh.begin * in_w + ow * sw - pw, 2, 2, dst + ow, dst_at + ow);
    } else {
      const PoolWindow ww = pool_window(ow, in_w, kw, sw, pw);
      window_max<0, 0>(src, in_w, wh.begin * in_w + ww.begin, rows, ww.end - ww.begin, dst + ow, dst_at + ow);
    }
  }
}

}  // namespace

Tensor max_pool2d(const Tensor& x, const Pool2dArgs& args, Tensor* indices) {
  const Conv2dGeometry g = pool2d_geometry(x.shape(), args, "max_pool2d");
  Tensor y = empty(pooled_shape(g), TensorOptions().dtype(x.dtype()).device(x.device()));
  Tensor idx = empty(pooled_shape(g), TensorOptions().dtype(DType::i64).device(x.device()));
  const int64_t planes = g.batch * g.in_channels, in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  dispatch_floating("max_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    int64_t* where = idx.data<int64_t>();
    parallel_for(planes, plane_grain(in_plane), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        for (int64_t oh = 0; oh < g.out_h; ++oh)
          max_pool_row(in + p * in_plane, g.in_w, pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h), g.out_w,
                       g.kernel_w, g.stride_w, g.pad_w, out + p * out_plane + oh * g.out_w,
                       where + p * out_plane + oh * g.out_w);
    });
  });
  if (indices) *indices = idx;
  return y;
}

Tensor max_pool2d_backward(const Tensor& dy, const Tensor& indices, const Shape& x_shape) {
  Tensor dx = empty(x_shape, TensorOptions().dtype(dy.dtype()).device(dy.device()));
  const int64_t planes = x_shape[0] * x_shape[1], in_plane = x_shape[2] * x_shape[3];
  const int64_t out_plane = dy.size(2) * dy.size(3);
  dispatch_floating("max_pool2d_backward", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* grad = dy.data<T>();
    const int64_t* where = indices.data<int64_t>();
    T* out = dx.data<T>();
    parallel_for(planes, plane_grain(in_plane + out_plane), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        T* dst = out + p * in_plane;
        std::fill(dst, dst + in_plane, T(0));
        for (int64_t o = p * out_plane; o < (p + 1) * out_plane; ++o) dst[where[o]] = T(C(dst[where[o]]) + C(grad[o]));
      }
    });
  });
  return dx;
}

Tensor avg_pool2d(const Tensor& x, const Pool2dArgs& args) {
  const Conv2dGeometry g = pool2d_geometry(x.shape(), args, "avg_pool2d");
  Tensor y = empty(pooled_shape(g), TensorOptions().dtype(x.dtype()).device(x.device()));
  const int64_t planes = g.batch * g.in_channels, in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  dispatch_floating("avg_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    parallel_for(planes, plane_grain(in_plane), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const T* src = in + p * in_plane;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const PoolWindow wh = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const PoolWindow ww = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
            C sum = C(0);
            for (int64_t h = wh.begin; h < wh.end; ++h)
              for (int64_t w = ww.begin; w < ww.end; ++w) sum += C(src[h * g.in_w + w]);
            out[p * out_plane + oh * g.out_w + ow] = T(sum / C(wh.padded_span * ww.padded_span));
          }
        }
      }
    });
  });
  return y;
}

Tensor avg_pool2d_backward(const Tensor& dy, const Shape& x_shape, const Pool2dArgs& args) {
  const Conv2dGeometry g = pool2d_geometry(x_shape, args, "avg_pool2d_backward");
  Tensor dx = empty(x_shape, TensorOptions().dtype(dy.dtype()).device(dy.device()));
  const int64_t planes = g.batch * g.in_channels, in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  dispatch_floating("avg_pool2d_backward", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* grad = dy.data<T>();
    T* out = dx.data<T>();
    parallel_for(planes, plane_grain(in_plane + out_plane), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        T* dst = out + p * in_plane;
        std::fill(dst, dst + in_plane, T(0));
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const PoolWindow wh = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const PoolWindow ww = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
            const C share = C(grad[p * out_plane + oh * g.out_w + ow]) / C(wh.padded_span * ww.padded_span);
            for (int64_t h = wh.begin; h < wh.end; ++h)
              for (int64_t w = ww.begin; w < ww.end; ++w) dst[h * g.in_w + w] = T(C(dst[h * g.in_w + w]) + share);
          }
        }
      }
    });
  });
  return dx;
}

}  // namespace ember::kernels::cpu
