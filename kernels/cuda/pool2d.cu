// CUDA max and average pooling over NCHW planes, forward and backward.
//   - forward: one thread per output element walks its window (kernels/conv_geometry.h's
//     pool_window, shared with the CPU). Max pooling takes the window's maximum with
//     kernels/pool_math.h's pool_argmax (first maximum wins, NaN wins, as on the CPU)
//     and writes only y: no indices are kept.
//   - both backwards are gathers: one thread per input element visits the outputs
//     whose windows cover it, in increasing (oh, ow) order, the order the CPU adds
//     them in. No atomics, so the result is deterministic.
//   - max_pool2d's backward recomputes each covering window's argmax from x with
//     pool_argmax and adds that output's dy when the argmax is this element. Each add
//     rounds to the storage type, like the CPU's scatter into dx, so f16 results are
//     the CPU's bit for bit (f32 and f64 round nothing extra).
#include "kernels/cuda/device_utils.cuh"
#include "kernels/ops.h"
#include "kernels/pool_math.h"
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
__global__ void max_pool2d_kernel(Conv2dGeometry g, const D* x, D* y, int64_t total) {
  const int64_t out_plane = g.out_h * g.out_w;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t o = i % out_plane;
    store(y, i, pool_argmax<C>(g, x + (i / out_plane) * g.in_plane(), o / g.out_w, o % g.out_w).value);
  }
}

// v rounded to the storage type D and back, as a store into dx and a reload would.
template <class D, class C>
__device__ __forceinline__ C round_to_storage(C v) {
  return C(static_cast<D>(v));
}
template <>
__device__ __forceinline__ float round_to_storage<__half, float>(float v) {
  return __half2float(__float2half(v));
}

// dx[p, ih, iw] = sum of dy[p, oh, ow] over the covering outputs whose argmax (recomputed from x)
// is (ih, iw), added in (oh, ow) order with one rounding to D per add, as the CPU does.
template <class D, class C>
__global__ void max_pool2d_backward_kernel(Conv2dGeometry g, const D* x, const D* dy, D* dx, int64_t total) {
  const int64_t in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t p = i / in_plane, at = i % in_plane, ih = at / g.in_w, iw = at % g.in_w;
    const D* src = x + p * in_plane;
    const OutputRange rh = covering_outputs(ih, g.kernel_h, g.stride_h, g.pad_h, g.out_h);
    const OutputRange rw = covering_outputs(iw, g.kernel_w, g.stride_w, g.pad_w, g.out_w);
    C sum = C(0);
    for (int64_t oh = rh.begin; oh < rh.end; ++oh)
      for (int64_t ow = rw.begin; ow < rw.end; ++ow)
        if (pool_argmax<C>(g, src, oh, ow).at == at)
          sum = round_to_storage<D>(sum + C(load(dy, p * out_plane + oh * g.out_w + ow)));
    store(dx, i, sum);
  }
}

template <class D, class C>
__global__ void avg_pool2d_kernel(Conv2dGeometry g, bool count_include_pad, const D* x, D* y, int64_t total) {
  const int64_t out_plane = g.out_h * g.out_w;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t o = i % out_plane, oh = o / g.out_w, ow = o % g.out_w;
    const D* src = x + (i / out_plane) * g.in_plane();
    const PoolWindow wh = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
    const PoolWindow ww = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
    C sum = C(0);
    for (int64_t h = wh.begin; h < wh.end; ++h)
      for (int64_t w = ww.begin; w < ww.end; ++w) sum += C(load(src, h * g.in_w + w));
    store(y, i, sum / C(pool_divisor(wh, ww, count_include_pad)));
  }
}

// dx[p, ih, iw] = sum over the covering outputs of dy / (that output's divisor).
template <class D, class C>
__global__ void avg_pool2d_backward_kernel(Conv2dGeometry g, bool count_include_pad, const D* dy, D* dx,
                                           int64_t total) {
  const int64_t in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t p = i / in_plane, at = i % in_plane, ih = at / g.in_w, iw = at % g.in_w;
    const OutputRange rh = covering_outputs(ih, g.kernel_h, g.stride_h, g.pad_h, g.out_h);
    const OutputRange rw = covering_outputs(iw, g.kernel_w, g.stride_w, g.pad_w, g.out_w);
    C sum = C(0);
    for (int64_t oh = rh.begin; oh < rh.end; ++oh) {
      const PoolWindow wh = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
      for (int64_t ow = rw.begin; ow < rw.end; ++ow) {
        const PoolWindow ww = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
        sum += C(load(dy, p * out_plane + oh * g.out_w + ow)) / C(pool_divisor(wh, ww, count_include_pad));
      }
    }
    store(dx, i, sum);
  }
}

// ---- entry points ----

namespace {


}  // namespace

void max_pool2d(const Tensor& x, const Conv2dGeometry& g, const Tensor& y) {
  dispatch_floating("max_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("max_pool2d", y.numel(), max_pool2d_kernel<device_t<T>, compute_t<T>>, g, device_data<T>(x),
              device_data<T>(y), y.numel());
  });
}

void max_pool2d_backward(const Tensor& dy, const Tensor& x, const Conv2dGeometry& g, const Tensor& dx) {
  dispatch_floating("max_pool2d_backward", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("max_pool2d_backward", dx.numel(), max_pool2d_backward_kernel<device_t<T>, compute_t<T>>, g,
              device_data<T>(x), device_data<T>(dy), device_data<T>(dx), dx.numel());
  });
}

void avg_pool2d(const Tensor& x, const Conv2dGeometry& g, bool count_include_pad, const Tensor& y) {
  dispatch_floating("avg_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("avg_pool2d", y.numel(), avg_pool2d_kernel<device_t<T>, compute_t<T>>, g, count_include_pad,
              device_data<T>(x), device_data<T>(y), y.numel());
  });
}

void avg_pool2d_backward(const Tensor& dy, const Conv2dGeometry& g, bool count_include_pad, const Tensor& dx) {
  dispatch_floating("avg_pool2d_backward", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("avg_pool2d_backward", dx.numel(), avg_pool2d_backward_kernel<device_t<T>, compute_t<T>>, g,
              count_include_pad, device_data<T>(dy), device_data<T>(dx), dx.numel());
  });
}

}  // namespace ember::kernels::cuda
