// CPU conv2d, forward and backward, NCHW, groups = 1. Three algorithms (kernels/providers.h,
// EMBER_CPU_CONV): 3x3 stride-1 layers with >= 16 channels in and out run Winograd
// F(2x2, 3x3) (kernels/cpu/conv2d_winograd.h); other stride-1 f32 layers with fewer than 16
// input channels run the direct convolution (kernels/cpu/conv2d_direct.h: forward and weight
// gradient) when the CPU has AVX2 or AVX-512; everything else runs im2col + GEMM, whose
// policy is:
//   - im2col per image into a per-thread column buffer [C*KH*KW, OH*OW], then one
//     GEMM per image (kernels/cpu/gemm.h: ember's packed GEMM, or OpenBLAS):
//       forward      y[n]    = W [OC, CKK] * cols[n] + bias per row (added at the GEMM's write-out)
//       weight grad  dW     += dy[n] [OC, P] * cols[n]^T      (one partial dW per thread)
//       input grad   dcols   = W^T * dy[n], then col2im adds dcols into dx[n]
//     W (and W^T) is packed once per call for all the images (cpu::PackedA, workspace).
//   - images are split into one contiguous range per OpenMP thread; the GEMM runs
//     single-threaded inside them, so two cores never fight over one small GEMM. One image
//     uses the GEMM's threads.
//   - im2col of a "same" convolution (unit strides, output as wide as the input) copies
//     each column-matrix row as one block, then zeroes the padding columns.
//   - a 1x1, stride-1, unpadded kernel skips im2col: the image is its column matrix.
//   - column buffers come from memory/ as workspace, not from the stack or malloc.
//   - f16 is a storage type: widened to f32, convolved, narrowed back.
// Index math shared with CUDA is kernels/conv_geometry.h.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/simulation.h"
#include "kernels/cpu/channel_planes.h"
#include "kernels/cpu/conv2d_direct.h"
#include "kernels/cpu/conv2d_winograd.h"
#include "kernels/cpu/f16_storage.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/im2col.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"
#include "kernels/providers.h"
#include "memory/scopes.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

#include "kernels/backend_api.inc"
#include "kernels/backend_into.inc"

namespace {

// How a batch is cut: each OpenMP thread takes one contiguous range of images (a chunk) with
// its own column buffer [CKK, P] (P = OH*OW) and im2col's scratch, and runs one GEMM per image.
// Grouping several images into one wider GEMM was measured (with OpenBLAS) and gained nothing:
// products of 50-100 columns already run near peak, and the gather/scatter costs copies.
struct ConvPlan {
  int64_t batch, chunks;
  int64_t rows, pixels, out_channels;  // CKK, P, OC
  int64_t scratch;                     // im2col's padded planes (kernels/cpu/im2col.h), per chunk
  bool direct;                         // pointwise kernel: the image is its own column matrix
};

ConvPlan plan_for(const Conv2dGeometry& g) {
  return ConvPlan{g.batch,          std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), g.batch)),
                  g.col_rows(),     g.col_cols(),
                  g.out_channels,   im2col_scratch(g),
                  g.is_pointwise()};
}

// Per-thread column buffers and scratch (undefined when no im2col is needed).
Tensor column_workspace(const ConvPlan& p, DType dtype) {
  if (p.direct) return Tensor();
  CategoryScope scope(MemoryCategory::workspace);
  return empty(Shape{p.chunks, p.rows * p.pixels + p.scratch}, TensorOptions().dtype(dtype));
}

// One chunk's buffers: its column matrix and im2col's scratch (both null when direct).
template <class T>
struct ChunkBuffers {
  T* cols;
  T* scratch;
};

// Calls fn(chunk, buffers, image) for every image, the images of one chunk in order on one
// thread, with that chunk's buffers (the scratch zeroed before its first image).
template <class T, class Fn>
void for_each_image(const ConvPlan& p, const Tensor& workspace, const Fn& fn) {
  parallel_for(p.chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t chunk = c0; chunk < c1; ++chunk) {
      ChunkBuffers<T> buffers{nullptr, nullptr};
      if (workspace.defined()) {
        buffers.cols = workspace.data<T>() + chunk * (p.rows * p.pixels + p.scratch);
        buffers.scratch = buffers.cols + p.rows * p.pixels;
        std::fill(buffers.scratch, buffers.scratch + p.scratch, T(0));
      }
      const int64_t end = p.batch * (chunk + 1) / p.chunks;
      for (int64_t n = p.batch * chunk / p.chunks; n < end; ++n) fn(chunk, buffers, n);
    }
  });
}

// Whether this convolution runs as Winograd F(2x2, 3x3) (kernels/providers.h: EMBER_CPU_CONV).
bool use_winograd(const Conv2dGeometry& g) {
  switch (cpu_conv_algorithm()) {
    case CpuConvAlgorithm::im2col:
    case CpuConvAlgorithm::direct: return false;
    case CpuConvAlgorithm::winograd:
    case CpuConvAlgorithm::winograd4: return winograd_applies(g);
    case CpuConvAlgorithm::automatic: break;
  }
  return winograd_pays(g);
}

// The output tile of a Winograd forward: F(4x4, 3x3) under EMBER_CPU_CONV=winograd4, and under auto
// where its tiles fill the vectors (kernels/cpu/conv2d_winograd.h: winograd4_pays); F(2x2) elsewhere.
int64_t winograd_forward_tile(const Conv2dGeometry& g) {
  switch (cpu_conv_algorithm()) {
    case CpuConvAlgorithm::winograd4: return 4;
    case CpuConvAlgorithm::automatic: return winograd4_pays(g) ? 4 : 2;
    default: return 2;
  }
}

// The output tile of a Winograd weight gradient: F(4x4, 3x3) under EMBER_CPU_CONV=winograd4, and
// under auto wherever Winograd runs (kernels/cpu/conv2d_winograd.h: winograd4_weight_grad_pays);
// F(2x2) under winograd.
int64_t winograd_weight_grad_tile(const Conv2dGeometry& g) {
  switch (cpu_conv_algorithm()) {
    case CpuConvAlgorithm::winograd4: return 4;
    case CpuConvAlgorithm::automatic: return winograd4_weight_grad_pays(g) ? 4 : 2;
    default: return 2;
  }
}

// Whether this convolution runs as the direct convolution (f32 only: kernels/cpu/conv2d_direct.h).
template <class T>
bool use_direct(const Conv2dGeometry& g) {
  if (!std::is_same_v<T, float>) return false;
  switch (cpu_conv_algorithm()) {
    case CpuConvAlgorithm::im2col:
    case CpuConvAlgorithm::winograd:
    case CpuConvAlgorithm::winograd4: return false;
    case CpuConvAlgorithm::direct: return direct_applies(g);
    case CpuConvAlgorithm::automatic: break;
  }
  return !winograd_pays(g) && direct_pays(g);
}

template <class T>
void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                    const Tensor& y) {
  if (use_winograd(g)) {
    conv2d_winograd<T>(g, x, weight, bias, y, winograd_forward_tile(g));
    return;
  }
  if constexpr (std::is_same_v<T, float>)
    if (use_direct<T>(g)) {
      conv2d_direct(g, x, weight, bias, y);
      return;
    }
  const ConvPlan p = plan_for(g);
  const Tensor workspace = column_workspace(p, x.dtype());
  const PackedA<T> w(p.out_channels, p.rows, {weight.data<T>(), p.rows});
  if (simulating()) return;
  const T* b = bias.defined() ? bias.data<T>() : nullptr;
  const int64_t image_size = g.in_channels * g.in_plane();
  for_each_image<T>(p, workspace, [&](int64_t, const ChunkBuffers<T>& buf, int64_t n) {
    const T* x_n = x.data<T>() + n * image_size;
    if (!p.direct) im2col(g, x_n, buf.cols, buf.scratch);
    // no input channels: an empty sum, so y is the bias (or zero)
    gemm(w, p.pixels, {p.direct ? x_n : buf.cols, p.pixels}, {y.data<T>() + n * p.out_channels * p.pixels, p.pixels, T(0), b});
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
  const int64_t per_oc = std::max<int64_t>(1, g.in_channels * taps);
  parallel_for(g.out_channels, std::max<int64_t>(1, kParallelGrain / per_oc), [&](int64_t oc0, int64_t oc1) {
    for (int64_t oc = oc0; oc < oc1; ++oc)
      for (int64_t c = 0; c < g.in_channels; ++c)
        for (int64_t t = 0; t < taps; ++t)
          o[(c * g.out_channels + oc) * taps + (taps - 1 - t)] = w[(oc * g.in_channels + c) * taps + t];
  });
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
  const PackedA<T> w_t(p.rows, p.out_channels, {weight.data<T>(), p.rows, /*transposed=*/true});  // W^T [CKK, OC]
  if (simulating()) return;
  const int64_t image_size = g.in_channels * g.in_plane();
  for_each_image<T>(p, workspace, [&](int64_t, const ChunkBuffers<T>& buf, int64_t n) {
    T* dx_n = dx.data<T>() + n * image_size;
    gemm(w_t, p.pixels, {dy.data<T>() + n * p.out_channels * p.pixels, p.pixels}, {p.direct ? dx_n : buf.cols, p.pixels});
    if (p.direct) return;
    std::fill(dx_n, dx_n + image_size, T(0));
    col2im_add(g, buf.cols, dx_n);
  });
}

template <class T>
void conv2d_weight_grad(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, const Tensor& dw) {
  if (use_winograd(g)) {
    conv2d_winograd_weight_grad<T>(g, x, dy, dw, winograd_weight_grad_tile(g));
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
  for_each_image<T>(p, workspace, [&](int64_t chunk, const ChunkBuffers<T>& buf, int64_t n) {
    const T* x_n = x.data<T>() + n * image_size;
    if (!p.direct) im2col(g, x_n, buf.cols, buf.scratch);
    gemm<T>(oc, p.rows, p.pixels, {dy.data<T>() + n * oc * p.pixels, p.pixels},
            {p.direct ? x_n : buf.cols, p.pixels, /*transposed=*/true}, {partial.data<T>() + chunk * oc * p.rows, p.rows, T(1)});
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
  const ChannelLayout l = channel_layout(dy.shape());
  dispatch_floating("conv2d_backward_bias", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* g = dy.data<T>();
    T* out = db.data<T>();
    // each (n, c) plane summed in C, then a channel's planes in double over n in order
    std::vector<double> plane_sums(static_cast<size_t>(l.planes()));
    for_each_plane(l, [&](int64_t p) {
      const T* x = g + p * l.inner;
      C sum = C(0);
#pragma omp simd reduction(+ : sum)
      for (int64_t i = 0; i < l.inner; ++i) sum += C(x[i]);
      plane_sums[static_cast<size_t>(p)] = static_cast<double>(sum);
    });
    for (int64_t c = 0; c < l.channels; ++c) out[c] = T(static_cast<C>(sum_over_batch(l, plane_sums, c)));
  });
}

}  // namespace ember::kernels::cpu
