// CUDA max and average pooling over NCHW planes, forward and backward.
//   - forward: one thread per output element walks its window (kernels/conv_geometry.h's
//     pool_window, shared with the CPU). Max pooling records each maximum's flat
//     offset h*W + w in its plane (i64), NaN winning like the CPU (max_takes).
//   - avg_pool2d's backward is a gather: one thread per input element visits the
//     outputs whose windows cover it, in increasing (oh, ow) order, the order the
//     CPU adds them in. No atomics, so the result is deterministic.
//   - max_pool2d's backward only has the indices (the window geometry is not passed),
//     so it scatters: one thread per output adds dy at its recorded maximum with
//     atomicAdd. Windows that do not overlap (stride >= kernel, the usual 2x2/2) never
//     share a maximum, so the result is exact; overlapping windows that share one
//     add 2 to 4 values in an unspecified order (last-bit differences, like PyTorch).
#include "kernels/cuda/device_utils.cuh"
#include "kernels/ops.h"
#include "kernels/softmax_math.h"
#include "memory/empty.h"

namespace ember::kernels::cuda {

// ---- device math ----

// The outputs [begin, end) whose (unclamped) windows [o*stride - pad, o*stride - pad + kernel) contain `in_index`.
struct OutputRange {
  int64_t begin, end;
};

__device__ __forceinline__ OutputRange covering_outputs(int64_t in_index, int64_t kernel, int64_t stride, int64_t pad,
                                                       int64_t out_size) {
  const int64_t shifted = in_index + pad;  // >= 0
  const int64_t begin = shifted < kernel ? 0 : (shifted - kernel) / stride + 1;
  const int64_t last = shifted / stride;
  return OutputRange{begin, last + 1 < out_size ? last + 1 : out_size};
}

// ---- kernels ----

template <class D, class C>
__global__ void max_pool2d_kernel(Conv2dGeometry g, const D* x, D* y, int64_t* indices, int64_t total) {
  const int64_t out_plane = g.out_h * g.out_w;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t o = i % out_plane, oh = o / g.out_w, ow = o % g.out_w;
    const D* src = x + (i / out_plane) * g.in_plane();
    const PoolWindow wh = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
    const PoolWindow ww = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
    // padding <= kernel/2 (pool2d_geometry) guarantees a non-empty window inside the plane
    int64_t best_at = wh.begin * g.in_w + ww.begin;
    C best = C(load(src, best_at));
    for (int64_t h = wh.begin; h < wh.end; ++h)
      for (int64_t w = ww.begin; w < ww.end; ++w) {
        const C v = C(load(src, h * g.in_w + w));
        if (max_takes(v, best)) {
          best = v;
          best_at = h * g.in_w + w;
        }
      }
    store(y, i, best);
    indices[i] = best_at;
  }
}

// dx (zeroed) [planes, in_plane] += dy [planes, out_plane] at each output's recorded maximum.
// The entry point has rejected indices outside the plane (kernels/dispatch_cnn.cpp); the
// guard only keeps a direct backend call in bounds.
template <class D>
__global__ void max_pool2d_backward_kernel(const D* dy, const int64_t* indices, D* dx, int64_t in_plane,
                                           int64_t out_plane, int64_t total) {
  for (int64_t o = thread_index(); o < total; o += thread_count()) {
    const int64_t at = indices[o];
    if (at >= 0 && at < in_plane) atomicAdd(dx + (o / out_plane) * in_plane + at, dy[o]);
  }
}

template <class D, class C>
__global__ void avg_pool2d_kernel(Conv2dGeometry g, const D* x, D* y, int64_t total) {
  const int64_t out_plane = g.out_h * g.out_w;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t o = i % out_plane, oh = o / g.out_w, ow = o % g.out_w;
    const D* src = x + (i / out_plane) * g.in_plane();
    const PoolWindow wh = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
    const PoolWindow ww = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
    C sum = C(0);
    for (int64_t h = wh.begin; h < wh.end; ++h)
      for (int64_t w = ww.begin; w < ww.end; ++w) sum += C(load(src, h * g.in_w + w));
    store(y, i, sum / C(wh.padded_span * ww.padded_span));
  }
}

// dx[p, ih, iw] = sum over the covering outputs of dy / (that output's divisor).
template <class D, class C>
__global__ void avg_pool2d_backward_kernel(Conv2dGeometry g, const D* dy, D* dx, int64_t total) {
  const int64_t in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t p = i / in_plane, at = i % in_plane, ih = at / g.in_w, iw = at % g.in_w;
    const OutputRange rh = covering_outputs(ih, g.kernel_h, g.stride_h, g.pad_h, g.out_h);
    const OutputRange rw = covering_outputs(iw, g.kernel_w, g.stride_w, g.pad_w, g.out_w);
    C sum = C(0);
    for (int64_t oh = rh.begin; oh < rh.end; ++oh) {
      const int64_t span_h = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h).padded_span;
      for (int64_t ow = rw.begin; ow < rw.end; ++ow) {
        const int64_t span_w = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w).padded_span;
        sum += C(load(dy, p * out_plane + oh * g.out_w + ow)) / C(span_h * span_w);
      }
    }
    store(dx, i, sum);
  }
}

// ---- entry points ----

namespace {

Shape pooled_shape(const Conv2dGeometry& g) { return Shape{g.batch, g.in_channels, g.out_h, g.out_w}; }

}  // namespace

Tensor max_pool2d(const Tensor& x, const Pool2dArgs& args, Tensor* indices) {
  const Conv2dGeometry g = pool2d_geometry(x.shape(), args, "max_pool2d");
  Tensor y = empty(pooled_shape(g), TensorOptions().dtype(x.dtype()).device(x.device()));
  Tensor idx = empty(pooled_shape(g), TensorOptions().dtype(DType::i64).device(x.device()));
  dispatch_floating("max_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("max_pool2d", y.numel(), max_pool2d_kernel<device_t<T>, compute_t<T>>, g, device_data<T>(x),
              device_data<T>(y), idx.data<int64_t>(), y.numel());
  });
  if (indices) *indices = idx;
  return y;
}

Tensor max_pool2d_backward(const Tensor& dy, const Tensor& indices, const Shape& x_shape) {
  Tensor dx = empty(x_shape, TensorOptions().dtype(dy.dtype()).device(dy.device()));
  if (dx.numel() == 0) return dx;
  EMBER_CUDA_CHECK(cudaMemsetAsync(dx.data_ptr(), 0, dx.nbytes(), current_stream()));  // 0 bits are 0.0
  const int64_t in_plane = x_shape[2] * x_shape[3], out_plane = dy.size(2) * dy.size(3);
  dispatch_floating("max_pool2d_backward", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("max_pool2d_backward", dy.numel(), max_pool2d_backward_kernel<device_t<T>>, device_data<T>(dy),
              indices.data<int64_t>(), device_data<T>(dx), in_plane, out_plane, dy.numel());
  });
  return dx;
}

Tensor avg_pool2d(const Tensor& x, const Pool2dArgs& args) {
  const Conv2dGeometry g = pool2d_geometry(x.shape(), args, "avg_pool2d");
  Tensor y = empty(pooled_shape(g), TensorOptions().dtype(x.dtype()).device(x.device()));
  dispatch_floating("avg_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("avg_pool2d", y.numel(), avg_pool2d_kernel<device_t<T>, compute_t<T>>, g, device_data<T>(x),
              device_data<T>(y), y.numel());
  });
  return y;
}

Tensor avg_pool2d_backward(const Tensor& dy, const Shape& x_shape, const Pool2dArgs& args) {
  const Conv2dGeometry g = pool2d_geometry(x_shape, args, "avg_pool2d_backward");
  Tensor dx = empty(x_shape, TensorOptions().dtype(dy.dtype()).device(dy.device()));
  dispatch_floating("avg_pool2d_backward", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("avg_pool2d_backward", dx.numel(), avg_pool2d_backward_kernel<device_t<T>, compute_t<T>>, g,
              device_data<T>(dy), device_data<T>(dx), dx.numel());
  });
  return dx;
}

}  // namespace ember::kernels::cuda
