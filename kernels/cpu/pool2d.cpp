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

}  // namespace

Tensor max_pool2d(const Tensor& x, const Pool2dArgs& args, Tensor* indices) {
  const Conv2dGeometry g = pool2d_geometry(x.shape(), args, "max_pool2d");
  Tensor y = empty(pooled_shape(g), TensorOptions().dtype(x.dtype()).device(x.device()));
  Tensor idx = empty(pooled_shape(g), TensorOptions().dtype(DType::i64).device(x.device()));
  const int64_t planes = g.batch * g.in_channels, in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  dispatch_floating("max_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    int64_t* where = idx.data<int64_t>();
    parallel_for(planes, plane_grain(in_plane), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const T* src = in + p * in_plane;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const PoolWindow wh = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const PoolWindow ww = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
            // padding <= kernel/2 guarantees a non-empty window
            int64_t best_at = wh.begin * g.in_w + ww.begin;
            C best = C(src[best_at]);
            for (int64_t h = wh.begin; h < wh.end; ++h)
              for (int64_t w = ww.begin; w < ww.end; ++w) {
                const C v = C(src[h * g.in_w + w]);
                if (max_takes(v, best)) {
                  best = v;
                  best_at = h * g.in_w + w;
                }
              }
            out[p * out_plane + oh * g.out_w + ow] = T(best);
            where[p * out_plane + oh * g.out_w + ow] = best_at;
          }
        }
      }
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
