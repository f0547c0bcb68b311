// CUDA conv2d, forward and backward, NCHW, groups = 1, in two providers chosen at
// run time (kernels/providers.h, EMBER_CONV=custom|cudnn). The cuDNN one is
// kernels/cuda/cudnn_conv.cu; this file holds ours and the parts both share
// (the bias add, the bias gradient). Empty outputs and empty sums never reach here:
// the entry point (kernels/dispatch_cnn.cpp) returns or zero-fills them.
//
// Ours is im2col + GEMM (kernels/cuda/gemm.cuh: our tiled GEMM, or cuBLAS under
// EMBER_GEMM=cublas), over chunks of images:
//   forward      y[n]       = W [OC, CKK] * cols[n] [CKK, P]      one batched GEMM per chunk, W shared
//   input grad   dcols[n]   = W^T * dy[n], then col2im gathers each dx element's taps
//                             (one thread per element: no atomics, a fixed summation order)
//   weight grad  partial[n] = dy[n] * cols[n]^T per image (batched GEMM), then the partials
//                             are summed over the batch in image order (deterministic)
//   bias grad    dy summed over N, OH, OW per channel (one block per channel), both providers
// A chunk's columns (and weight partials) live in one workspace tensor of at most
// kCudaConvChunkBudgetBytes (at least one image), allocated under MemoryCategory::workspace
// and sized by kernels/conv_scratch_cuda.h, which a shape-only run (ember plan) allocates too.
// A 1x1, stride-1, unpadded kernel skips im2col: the image is its own column matrix.
// Index math shared with the CPU: kernels/conv_geometry.h (im2col_source, col2im_gather).
//
// f16: the forward keeps f16 columns (im2col copies bits) and the GEMM accumulates
// in fp32, rounding once. The backward widens to f32 like the CPU does: the GEMM
// writes its storage type, so f16 per-tap and per-image partial sums would each be
// rounded before they are added.
#include <algorithm>
#include <type_traits>

#include "kernels/conv_scratch_cuda.h"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/converted.cuh"
#include "kernels/cuda/cudnn_conv.cuh"
#include "kernels/cuda/gemm.cuh"
#include "kernels/ops.h"
#include "kernels/providers.h"
#include "memory/scopes.h"
#include "memory/empty.h"

namespace ember::kernels::cuda {

#include "kernels/backend_api.inc"

// ---- kernels ----

// cols [images, CKK, P] from x [images, C, H, W] (x points at the chunk's first image).
template <class D>
__global__ void im2col_kernel(Conv2dGeometry g, const D* x, D* cols, int64_t images) {
  const int64_t ncols = g.col_cols(), per_image = g.col_rows() * ncols, image_size = g.in_channels * g.in_plane();
  const int64_t total = images * per_image;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t n = i / per_image, e = i % per_image;
    const int64_t src = im2col_source(g, e / ncols, e % ncols);
    if (src < 0) store(cols, i, 0.0f);
    else cols[i] = x[n * image_size + src];
  }
}

// dx [images, C, H, W]: each element gathers the column entries im2col copied from it.
template <class D, class Acc>
__global__ void col2im_kernel(Conv2dGeometry g, const D* cols, D* dx, int64_t images) {
  const int64_t plane = g.in_plane(), image_size = g.in_channels * plane;
  const int64_t per_image_cols = g.col_rows() * g.col_cols();
  const int64_t total = images * image_size;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t n = i / image_size, e = i % image_size;
    const int64_t c = e / plane, ih = (e % plane) / g.in_w, iw = e % g.in_w;
    store(dx, i, col2im_gather<D, Acc>(g, cols + n * per_image_cols, c, ih, iw));
  }
}

// y [N, OC, P] += bias [OC]
template <class D, class C>
__global__ void add_bias_kernel(D* y, const D* bias, int64_t n, int64_t plane, int64_t channels) {
  for (int64_t i = thread_index(); i < n; i += thread_count())
    store(y, i, C(load(y, i)) + C(load(bias, (i / plane) % channels)));
}

// dw[i] = (accumulate ? dw[i] : 0) + sum over j of partials[j, i], j in increasing order.
template <class D, class Acc>
__global__ void sum_partials_kernel(const D* partials, int64_t count, int64_t size, D* dw, bool accumulate) {
  for (int64_t i = thread_index(); i < size; i += thread_count()) {
    Acc sum = accumulate ? Acc(load(dw, i)) : Acc(0);
    for (int64_t j = 0; j < count; ++j) sum += Acc(load(partials, j * size + i));
    store(dw, i, sum);
  }
}

// Element k of channel c's values in dy [N, OC, P]: image k / P, pixel k % P.
template <class D, class C>
struct ChannelLift {
  const D* dy;
  int64_t channels, plane;
  __device__ C operator()(int64_t c, int64_t k) const {
    return C(load(dy, ((k / plane) * channels + c) * plane + k % plane));
  }
};

// ---- launchers ----

namespace {

Tensor workspace(int64_t elements, DType dtype, Device device) {
  CategoryScope scope(MemoryCategory::workspace);
  return empty(Shape{elements}, TensorOptions().dtype(dtype).device(device));
}

void zero_fill(const Tensor& t) {
  // 0 bits are 0.0 in every floating dtype
  if (t.nbytes() > 0) EMBER_CUDA_CHECK(cudaMemsetAsync(t.data_ptr(), 0, t.nbytes(), current_stream()));
}

// f16 backward: widened operands and the f32 result are scratch (temporary), as on the CPU.
Tensor widened(const Tensor& t) {
  CategoryScope scratch(MemoryCategory::temporary);
  return t.dtype() == DType::f16 ? converted(t, DType::f32) : t;
}

Tensor f32_scratch(const Shape& shape, Device device) {
  CategoryScope scratch(MemoryCategory::temporary);
  return empty(shape, TensorOptions(DType::f32).device(device));
}

template <class T>
void custom_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& y) {
  using D = device_t<T>;
  const int64_t rows = g.col_rows(), cols = g.col_cols(), image_in = g.in_channels * g.in_plane();
  const int64_t image_out = g.out_channels * cols;
  const D* xs = device_data<T>(x);
  D* ys = device_data<T>(y);
  GemmProblem p;  // y[n] [OC, P] = W [OC, CKK] * cols[n] [CKK, P]
  p.m = g.out_channels;
  p.n = cols;
  p.k = rows;
  p.stride_a = 0;
  p.stride_b = rows * cols;
  p.stride_c = image_out;
  if (g.is_pointwise()) {  // cols[n] is x[n]: [C, H*W]
    p.batch = g.batch;
    gemm(p, x.dtype(), weight.data_ptr(), xs, ys, x.device());
    return;
  }
  const CudaConvChunk c = cuda_conv_chunk(CudaConvPass::forward, g, sizeof(D));
  const int64_t chunk = c.images;
  const Tensor buffer = workspace(c.elements(), x.dtype(), x.device());
  D* columns = device_data<T>(buffer);
  for (int64_t n0 = 0; n0 < g.batch; n0 += chunk) {
    const int64_t images = std::min(chunk, g.batch - n0);
    launch_1d("conv2d (im2col)", images * rows * cols, im2col_kernel<D>, g, xs + n0 * image_in, columns, images);
    p.batch = images;
    gemm(p, x.dtype(), weight.data_ptr(), columns, ys + n0 * image_out, x.device());
  }
}

template <class T>
void custom_input_grad(const Conv2dGeometry& g, const Tensor& dy, const Tensor& weight, const Tensor& dx) {
  using D = device_t<T>;
  const int64_t rows = g.col_rows(), cols = g.col_cols(), image_in = g.in_channels * g.in_plane();
  const int64_t image_out = g.out_channels * cols;
  const D* grad = device_data<T>(dy);
  D* out = device_data<T>(dx);
  GemmProblem p;  // dcols[n] [CKK, P] = W^T [CKK, OC] * dy[n] [OC, P]; W is stored [OC, CKK]
  p.m = rows;
  p.n = cols;
  p.k = g.out_channels;
  p.transpose_a = true;
  p.stride_a = 0;
  p.stride_b = image_out;
  p.stride_c = rows * cols;
  if (g.is_pointwise()) {  // dcols[n] is dx[n]
    p.batch = g.batch;
    gemm(p, dy.dtype(), weight.data_ptr(), grad, out, dy.device());
    return;
  }
  const CudaConvChunk c = cuda_conv_chunk(CudaConvPass::input_grad, g, sizeof(D));
  const int64_t chunk = c.images;
  const Tensor buffer = workspace(c.elements(), dy.dtype(), dy.device());
  D* columns = device_data<T>(buffer);
  for (int64_t n0 = 0; n0 < g.batch; n0 += chunk) {
    const int64_t images = std::min(chunk, g.batch - n0);
    p.batch = images;
    gemm(p, dy.dtype(), weight.data_ptr(), grad + n0 * image_out, columns, dy.device());
    launch_1d("conv2d_backward_input (col2im)", images * image_in, col2im_kernel<D, compute_t<T>>, g, columns,
              out + n0 * image_in, images);
  }
}

template <class T>
void custom_weight_grad(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, const Tensor& dw) {
  using D = device_t<T>;
  const int64_t rows = g.col_rows(), cols = g.col_cols(), image_in = g.in_channels * g.in_plane();
  const int64_t image_out = g.out_channels * cols, weight_size = g.out_channels * rows;
  const bool pointwise = g.is_pointwise();
  const D* xs = device_data<T>(x);
  const D* grad = device_data<T>(dy);
  GemmProblem p;  // partial[n] [OC, CKK] = dy[n] [OC, P] * cols[n]^T; cols[n] is stored [CKK, P]
  p.m = g.out_channels;
  p.n = rows;
  p.k = cols;
  p.transpose_b = true;
  p.stride_a = image_out;
  p.stride_b = rows * cols;
  p.stride_c = weight_size;
  const CudaConvChunk c = cuda_conv_chunk(CudaConvPass::weight_grad, g, sizeof(D));  // columns and a partial dW
  const int64_t chunk = c.images;
  const Tensor buffer = workspace(c.elements(), dw.dtype(), dw.device());
  D* partials = device_data<T>(buffer);
  D* columns = partials + chunk * weight_size;
  for (int64_t n0 = 0; n0 < g.batch; n0 += chunk) {
    const int64_t images = std::min(chunk, g.batch - n0);
    const D* b = xs + n0 * image_in;  // pointwise: cols[n] is x[n]
    if (!pointwise) {
      launch_1d("conv2d_backward_weight (im2col)", images * rows * cols, im2col_kernel<D>, g, b, columns, images);
      b = columns;
    }
    p.batch = images;
    gemm(p, dy.dtype(), grad + n0 * image_out, b, partials, dy.device());
    launch_1d("conv2d_backward_weight (sum)", weight_size, sum_partials_kernel<D, compute_t<T>>, partials, images,
              weight_size, device_data<T>(dw), n0 > 0);
  }
}

}  // namespace

// ---- entry points ----

void conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dGeometry& g, const Tensor& y) {
  if (g.col_rows() == 0) {
    zero_fill(y);  // an empty sum (no input channels)
  } else if (conv_provider() == ConvProvider::cudnn) {
    cudnn_conv2d_forward(x, weight, y, g);
  } else {
    dispatch_floating("conv2d", x.dtype(), [&](auto tag) { custom_forward<decltype(tag)>(g, x, weight, y); });
  }
  if (bias.defined()) {
    dispatch_floating("conv2d", x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      launch_1d("conv2d (bias)", y.numel(), add_bias_kernel<device_t<T>, compute_t<T>>, device_data<T>(y),
                device_data<T>(bias), y.numel(), g.col_cols(), g.out_channels);
    });
  }
}

// ember's backward GEMMs are f32 or f64: f16 runs them on widened copies (scratch) and
// narrows the result into the output once.
void conv2d_backward_input(const Tensor& dy, const Tensor& weight, const Conv2dGeometry& g, const Tensor& dx) {
  if (conv_provider() == ConvProvider::cudnn) {
    cudnn_conv2d_backward_data(dy, weight, dx, g);
  } else if (dy.dtype() == DType::f16) {
    const Tensor dx32 = f32_scratch(dx.shape(), dx.device());
    cuda::conv2d_backward_input(widened(dy), widened(weight), g, dx32);
    copy_(dx, dx32);
  } else {
    dispatch_floating("conv2d_backward_input", dy.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, Half>) custom_input_grad<T>(g, dy, weight, dx);
    });
  }
}

void conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Conv2dGeometry& g, const Tensor& dw) {
  if (conv_provider() == ConvProvider::cudnn) {
    cudnn_conv2d_backward_filter(x, dy, dw, g);
  } else if (x.dtype() == DType::f16) {
    const Tensor dw32 = f32_scratch(dw.shape(), dw.device());
    cuda::conv2d_backward_weight(widened(x), widened(dy), g, dw32);
    copy_(dw, dw32);
  } else {
    dispatch_floating("conv2d_backward_weight", x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, Half>) custom_weight_grad<T>(g, x, dy, dw);
    });
  }
}

void conv2d_backward_bias(const Tensor& dy, const Tensor& db) {
  const int64_t batch = dy.size(0), channels = dy.size(1), plane = dy.size(2) * dy.size(3);
  dispatch_floating("conv2d_backward_bias", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using D = device_t<T>;
    using C = compute_t<T>;
    launch_reduce_rows("conv2d_backward_bias", channels, batch * plane, true,
                       ChannelLift<D, C>{device_data<T>(dy), channels, plane}, C(0), SumCombine{},
                       StoreRow<D, C>{device_data<T>(db), C(1)});
  });
}

}  // namespace ember::kernels::cuda
