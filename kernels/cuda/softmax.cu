// CUDA softmax family: softmax and log_softmax along any dim, their backwards,
// and the fused mean cross entropy with its backward. The per-element formulas
// are kernels/softmax_math.h, shared with the CPU backend (kernels/cpu/softmax.cpp).
//
// A row is x[o, :, i] of the [outer, n, inner] view (split_at_dim); row r starts
// at (r / inner) * n * inner + r % inner and steps by `inner`. Each row is
// handled by a group of threads, in three passes like the CPU (max, sum of
// exp(x - max), write), all in compute_t precision:
//   - a block per row when rows are contiguous (inner = 1, e.g. the classes of a
//     [N, C] batch) or too few to occupy the GPU one thread each; the block
//     strides over the row and combines partial results with block_reduce
//     (kernels/cuda/block_reduce.cuh: fixed order, deterministic);
//   - a thread per row otherwise (a softmax over channels of [N, C, H, W]):
//     neighbouring threads take neighbouring i, so every pass is coalesced.
// Labels are in [0, C): the entry points (kernels/dispatch_softmax.cpp) check them on the
// device first, for the forward and the backward, with find_out_of_range.
// The mean loss sums per-sample losses in fp64 in a single block: deterministic.
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/device_utils.cuh"
#include "kernels/ops.h"
#include "kernels/softmax_math.h"
#include "memory/empty.h"

namespace ember::kernels::cuda {

namespace {

// The compute type of a device storage type: float for __half, else the type itself.
template <class T> using acc_t = compute_t<std::conditional_t<std::is_same_v<T, __half>, Half, T>>;

// The threads that share one row: a whole block (of kThreadsPerBlock), or a single thread.
struct BlockGroup {
  __device__ int64_t first() const { return threadIdx.x; }
  __device__ int64_t step() const { return blockDim.x; }
  // Every thread gets the block's total (block_reduce.cuh: fixed order, deterministic).
  template <class C, class Combine>
  __device__ C reduce(C v, Combine combine) const { return block_reduce(v, combine); }
};
struct ThreadGroup {
  __device__ int64_t first() const { return 0; }
  __device__ int64_t step() const { return 1; }
  template <class C, class Combine>
  __device__ C reduce(C v, Combine) const { return v; }
};

template <class C>
struct RowStats {
  C max;
  C sum_exp;  // sum(exp(x - max))
};

// Row statistics of x[base + k * inner], k < n (n >= 1).
template <class T, class Group, class C = acc_t<T>>
__device__ RowStats<C> row_stats(const T* x, int64_t base, int64_t n, int64_t inner, Group g) {
  C max = static_cast<C>(load(x, base));  // a real element: a neutral start for every thread
  for (int64_t k = g.first(); k < n; k += g.step()) {
    const C v = static_cast<C>(load(x, base + k * inner));
    if (max_takes(v, max)) max = v;
  }
  max = g.reduce(max, MaxCombine{});
  C sum = C(0);
  for (int64_t k = g.first(); k < n; k += g.step()) sum += math::exp(static_cast<C>(load(x, base + k * inner)) - max);
  return {max, g.reduce(sum, SumCombine{})};
}

template <bool kLog, class T, class Group, class C = acc_t<T>>
__device__ void softmax_row(const T* x, T* y, int64_t base, int64_t n, int64_t inner, Group g) {
  const RowStats<C> st = row_stats(x, base, n, inner, g);
  const C log_sum = math::log(st.sum_exp);
  for (int64_t k = g.first(); k < n; k += g.step()) {
    const int64_t at = base + k * inner;
    const C v = static_cast<C>(load(x, at));
    store(y, at, kLog ? log_softmax_value(v, st.max, log_sum) : softmax_value(v, st.max, st.sum_exp));
  }
}

// dx from y and dy: the row reduction is sum(dy * y) for softmax, sum(dy) for log_softmax.
template <bool kLog, class T, class Group, class C = acc_t<T>>
__device__ void softmax_backward_row(const T* y, const T* dy, T* dx, int64_t base, int64_t n, int64_t inner, Group g) {
  C acc = C(0);
  for (int64_t k = g.first(); k < n; k += g.step()) {
    const int64_t at = base + k * inner;
    acc += kLog ? static_cast<C>(load(dy, at)) : static_cast<C>(load(dy, at)) * static_cast<C>(load(y, at));
  }
  acc = g.reduce(acc, SumCombine{});
  for (int64_t k = g.first(); k < n; k += g.step()) {
    const int64_t at = base + k * inner;
    const C yv = static_cast<C>(load(y, at)), dyv = static_cast<C>(load(dy, at));
    store(dx, at, kLog ? log_softmax_grad(yv, dyv, acc) : softmax_grad(yv, dyv, acc));
  }
}

__device__ __forceinline__ int64_t row_base(int64_t row, int64_t n, int64_t inner) {
  return (row / inner) * n * inner + row % inner;
}

// Rows are block-uniform in the block kernels, so the reductions' barriers are safe.
template <bool kLog, class T>
__global__ void softmax_block_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n,
                                     int64_t inner) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x)
    softmax_row<kLog>(x, y, row_base(row, n, inner), n, inner, BlockGroup{});
}
template <bool kLog, class T>
__global__ void softmax_thread_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n,
                                      int64_t inner) {
  for (int64_t row = thread_index(); row < rows; row += thread_count())
    softmax_row<kLog>(x, y, row_base(row, n, inner), n, inner, ThreadGroup{});
}
template <bool kLog, class T>
__global__ void softmax_backward_block_kernel(const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx,
                                              int64_t rows, int64_t n, int64_t inner) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x)
    softmax_backward_row<kLog>(y, dy, dx, row_base(row, n, inner), n, inner, BlockGroup{});
}
template <bool kLog, class T>
__global__ void softmax_backward_thread_kernel(const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx,
                                               int64_t rows, int64_t n, int64_t inner) {
  for (int64_t row = thread_index(); row < rows; row += thread_count())
    softmax_backward_row<kLog>(y, dy, dx, row_base(row, n, inner), n, inner, ThreadGroup{});
}

// Writes log_softmax of logits row `sample` and that sample's loss -log p[label].
template <class T>
__global__ void cross_entropy_kernel(const T* __restrict__ logits, const int64_t* __restrict__ labels,
                                     T* __restrict__ log_probs, double* __restrict__ sample_loss, int64_t samples,
                                     int64_t classes) {
  using C = acc_t<T>;
  const BlockGroup g;
  for (int64_t sample = blockIdx.x; sample < samples; sample += gridDim.x) {
    const int64_t base = sample * classes;
    const RowStats<C> st = row_stats(logits, base, classes, 1, g);
    const C log_sum = math::log(st.sum_exp);
    for (int64_t k = g.first(); k < classes; k += g.step())
      store(log_probs, base + k, log_softmax_value(static_cast<C>(load(logits, base + k)), st.max, log_sum));
    if (threadIdx.x == 0) {
      // Labels were checked before the launch; the guard only keeps a bad one from reading out of bounds.
      const int64_t label = labels[sample];
      const bool valid = label >= 0 && label < classes;
      sample_loss[sample] =
          valid ? -static_cast<double>(log_softmax_value(static_cast<C>(load(logits, base + label)), st.max, log_sum))
                : nan("");
    }
  }
}

// loss[0] = mean(sample_loss), one block, fixed order.
template <class L>
__global__ void mean_loss_kernel(const double* __restrict__ sample_loss, int64_t samples, L* __restrict__ loss) {
  const BlockGroup g;
  double sum = 0.0;
  for (int64_t i = g.first(); i < samples; i += g.step()) sum += sample_loss[i];
  sum = g.reduce(sum, SumCombine{});
  if (threadIdx.x == 0) loss[0] = static_cast<L>(sum / static_cast<double>(samples));
}

template <class T, class D>
__global__ void cross_entropy_backward_kernel(const T* __restrict__ log_probs, const int64_t* __restrict__ labels,
                                              const D* __restrict__ dloss, T* __restrict__ dlogits, int64_t total,
                                              int64_t classes) {
  using C = acc_t<T>;
  const int64_t samples = total / classes;
  const C scale = static_cast<C>(static_cast<double>(load(dloss, 0)) / static_cast<double>(samples));
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const bool is_label = i % classes == labels[i / classes];
    store(dlogits, i, cross_entropy_grad(static_cast<C>(load(log_probs, i)), is_label, scale));
  }
}

unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(rows < kMaxBlocks ? rows : kMaxBlocks); }

// Launches the block-per-row or the thread-per-row variant (see the top of the file).
template <class... Params, class... Args>
void launch_rows(const char* name, const DimSplit& s, void (*by_block)(Params...), void (*by_thread)(Params...),
                 Args... args) {
  const int64_t rows = s.outer * s.inner;
  if (s.inner == 1 || rows < kRowsForThreadPerRow) {
    by_block<<<row_blocks(rows), kThreadsPerBlock, 0, current_stream()>>>(args...);
  } else {
    by_thread<<<blocks_for(rows), kThreadsPerBlock, 0, current_stream()>>>(args...);
  }
  EMBER_CUDA_CHECK_LAUNCH(name);
}

template <bool kLog>
void softmax_forward(const Tensor& x, int64_t dim, const char* op, const Tensor& y) {
  const DimSplit s = split_at_dim(x.shape(), dim);
  dispatch_floating(op, x.dtype(), [&](auto tag) {
    using S = decltype(tag);
    using T = device_t<S>;
    launch_rows(op, s, softmax_block_kernel<kLog, T>, softmax_thread_kernel<kLog, T>,
                static_cast<const T*>(device_data<S>(x)), device_data<S>(y), s.outer * s.inner, s.n, s.inner);
  });
}

template <bool kLog>
void softmax_backward_rows(const Tensor& y, const Tensor& dy, int64_t dim, const char* op, const Tensor& dx) {
  const DimSplit s = split_at_dim(y.shape(), dim);
  dispatch_floating(op, y.dtype(), [&](auto tag) {
    using S = decltype(tag);
    using T = device_t<S>;
    launch_rows(op, s, softmax_backward_block_kernel<kLog, T>, softmax_backward_thread_kernel<kLog, T>,
                static_cast<const T*>(device_data<S>(y)), static_cast<const T*>(device_data<S>(dy)),
                device_data<S>(dx), s.outer * s.inner, s.n, s.inner);
  });
}

}  // namespace

void softmax(const Tensor& x, int64_t dim, const Tensor& y) { softmax_forward<false>(x, dim, "softmax", y); }
void log_softmax(const Tensor& x, int64_t dim, const Tensor& y) { softmax_forward<true>(x, dim, "log_softmax", y); }

void softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim, const Tensor& dx) {
  softmax_backward_rows<false>(y, dy, dim, "softmax_backward", dx);
}
void log_softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim, const Tensor& dx) {
  softmax_backward_rows<true>(y, dy, dim, "log_softmax_backward", dx);
}

void cross_entropy(const Tensor& logits, const Tensor& labels, const Tensor& lp, const Tensor& loss) {
  const int64_t samples = logits.size(0), classes = logits.size(1);
  Tensor sample_loss = empty(Shape{samples}, TensorOptions().dtype(DType::f64).device(logits.device()));
  dispatch_floating("cross_entropy", logits.dtype(), [&](auto tag) {
    using S = decltype(tag);
    using T = device_t<S>;
    cross_entropy_kernel<T><<<row_blocks(samples), kThreadsPerBlock, 0, current_stream()>>>(
        device_data<S>(logits), device_data<int64_t>(labels), device_data<S>(lp), device_data<double>(sample_loss),
        samples, classes);
    EMBER_CUDA_CHECK_LAUNCH("cross_entropy");
  });
  if (loss.dtype() == DType::f64)
    mean_loss_kernel<<<1, kThreadsPerBlock, 0, current_stream()>>>(device_data<double>(sample_loss), samples,
                                                                    device_data<double>(loss));
  else
    mean_loss_kernel<<<1, kThreadsPerBlock, 0, current_stream()>>>(device_data<double>(sample_loss), samples,
                                                                    device_data<float>(loss));
  EMBER_CUDA_CHECK_LAUNCH("cross_entropy");
}

void cross_entropy_backward(const Tensor& log_probs, const Tensor& labels, const Tensor& dloss, const Tensor& dlogits) {
  const int64_t classes = log_probs.size(1);
  dispatch_floating("cross_entropy_backward", log_probs.dtype(), [&](auto tag) {
    using S = decltype(tag);
    using T = device_t<S>;
    dispatch_floating("cross_entropy_backward", dloss.dtype(), [&](auto dloss_tag) {
      using SD = decltype(dloss_tag);
      launch_1d("cross_entropy_backward", log_probs.numel(), cross_entropy_backward_kernel<T, device_t<SD>>,
                static_cast<const T*>(device_data<S>(log_probs)), static_cast<const int64_t*>(device_data<int64_t>(labels)),
                static_cast<const device_t<SD>*>(device_data<SD>(dloss)), device_data<S>(dlogits), log_probs.numel(),
                classes);
    });
  });
}

}  // namespace ember::kernels::cuda
