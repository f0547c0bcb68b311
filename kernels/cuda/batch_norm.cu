// CUDA batch normalisation over x [N, C, *] (channels on dim 1): batch statistics
// with the running-stat update, the per-channel affine apply, and the fused
// backward. Formulas: kernels/batch_norm_math.h (shared with the CPU).
//   - statistics are S = fp32 for f16/f32 input and fp64 for f64, like the CPU. One
//     block per channel sums its N * inner values (block_reduce: a fixed tree, so the
//     result is deterministic), with the CPU's shift: sum(x - K) and sum((x - K)^2),
//     K = the channel's first value, so a large mean does not swallow the variance.
//   - the running statistics are updated on the device with the CPU's function,
//     batch_norm_running_update, in double whatever the dtypes (an f64 buffer next to
//     f32 x keeps its precision), then stored in the buffer's own dtype.
//   - per-channel inputs (mean, invstd, weight, bias) may have any floating dtype (the
//     CPU reads them all as double); they are cast to S once, so the kernels read S.
//   - backward: one block per channel reduces sum(dy) and sum(dy * (x - mean)), then
//     one elementwise pass writes dx.
#include "kernels/batch_norm_math.h"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/converted.cuh"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember::kernels::cuda {

#include "kernels/backend_api.inc"

// ---- device math ----

// x viewed as [batch, channels, inner]: element k of channel c's batch * inner values.
struct ChannelLayout {
  int64_t batch = 0, channels = 0, inner = 1;
  __host__ __device__ int64_t count() const { return batch * inner; }
  __device__ __forceinline__ int64_t offset(int64_t c, int64_t k) const {
    return ((k / inner) * channels + c) * inner + k % inner;
  }
};

template <class S>
struct SumPair {
  S a, b;
};

struct PairSum {
  template <class P> __device__ P operator()(P x, P y) const { return P{x.a + y.a, x.b + y.b}; }
};

// ---- kernels ----

// One block per channel: mean[c], var[c] (biased) and invstd[c].
template <class D, class S>
__global__ void channel_stats_kernel(const D* x, ChannelLayout l, S eps, S* mean, S* var, S* invstd) {
  const int64_t count = l.count();
  for (int64_t c = blockIdx.x; c < l.channels; c += gridDim.x) {  // uniform across the block
    const S shift = S(load(x, l.offset(c, 0)));
    SumPair<S> acc{S(0), S(0)};
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const S d = S(load(x, l.offset(c, k))) - shift;
      acc.a += d;
      acc.b += d * d;
    }
    acc = block_reduce(acc, PairSum{});
    if (threadIdx.x == 0) {
      const S centred = acc.a / S(count);
      const S v = acc.b / S(count) - centred * centred;
      mean[c] = shift + centred;
      var[c] = v > S(0) ? v : S(0);
      invstd[c] = batch_norm_invstd(var[c], eps);
    }
  }
}

// running[c] = (1 - momentum) * running[c] + momentum * stat[c] (unbiased: stat = var * M / (M - 1)),
// in double (batch_norm_running_update, shared with the CPU).
template <class R, class S>
__global__ void running_update_kernel(R* running, const S* stat, int64_t channels, double momentum, bool unbiased,
                                      int64_t count) {
  for (int64_t c = thread_index(); c < channels; c += thread_count()) {
    const double r = static_cast<double>(load(running, c));
    store(running, c, batch_norm_running_update(r, static_cast<double>(stat[c]), momentum, unbiased, count));
  }
}

// Channel c's scale = weight * invstd and shift = bias - mean * scale (weight, bias may be null),
// each rounded once: apply and the fused ReLU's backward compute them alike.
template <class S>
__device__ void affine_of(int64_t c, const S* mean, const S* invstd, const S* weight, const S* bias, S& scale,
                          S& shift) {
  scale = (weight ? weight[c] : S(1)) * invstd[c];
  shift = ::fma(-mean[c], scale, bias ? bias[c] : S(0));
}

// batch_norm_affine(x) rounded to x's storage type, as apply stores it.
template <class D, class S>
__device__ S stored_affine(const D* x, int64_t i, S scale, S shift) {
  D v;
  store(&v, 0, batch_norm_affine(S(load(x, i)), scale, shift));
  return S(load(&v, 0));
}

// y = x * scale + shift (batch_norm_affine), then + residual (rounded to D, as a separate add
// stores it) when residual is not null, then max(y, 0) with a fused ReLU.
template <class D, class S>
__global__ void apply_kernel(const D* x, ChannelLayout l, const S* mean, const S* invstd, const S* weight,
                             const S* bias, bool relu, const D* residual, D* y, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    const int64_t c = (i / l.inner) % l.channels;
    S scale, shift;
    affine_of(c, mean, invstd, weight, bias, scale, shift);
    S v = stored_affine(x, i, scale, shift);
    if (residual != nullptr) {
      D sum;
      store(&sum, 0, v + S(load(residual, i)));
      v = S(load(&sum, 0));
    }
    store(y, i, relu ? batch_norm_relu(v) : v);
  }
}

// dy, or with a fused ReLU dy where the forward's stored value was positive.
template <class D, class S>
__device__ S relu_masked(const D* x, const D* dy, int64_t i, int64_t c, const S* mean, const S* invstd,
                         const S* weight, const S* bias, bool relu) {
  const S g = S(load(dy, i));
  if (!relu) return g;
  S scale, shift;
  affine_of(c, mean, invstd, weight, bias, scale, shift);
  return stored_affine(x, i, scale, shift) > S(0) ? g : S(0);
}

// One block per channel: sum_dy[c] = sum(dy), sum_dy_xhat[c] = sum(dy * (x - mean)) * invstd.
template <class D, class S>
__global__ void backward_sums_kernel(const D* x, const D* dy, ChannelLayout l, const S* mean, const S* invstd,
                                     const S* weight, const S* bias, bool relu, S* sum_dy, S* sum_dy_xhat) {
  const int64_t count = l.count();
  for (int64_t c = blockIdx.x; c < l.channels; c += gridDim.x) {
    const S m = mean[c];
    SumPair<S> acc{S(0), S(0)};
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const int64_t at = l.offset(c, k);
      const S g = relu_masked(x, dy, at, c, mean, invstd, weight, bias, relu);
      acc.a += g;
      acc.b += g * (S(load(x, at)) - m);
    }
    acc = block_reduce(acc, PairSum{});
    if (threadIdx.x == 0) {
      sum_dy[c] = acc.a;
      sum_dy_xhat[c] = acc.b * invstd[c];
    }
  }
}

// dx = weight * invstd * (dy - mean_dy - xhat * mean_dy_xhat); the means are 0 with constant statistics.
template <class D, class S>
__global__ void backward_dx_kernel(const D* x, const D* dy, ChannelLayout l, const S* mean, const S* invstd,
                                   const S* weight, const S* bias, bool relu, const S* sum_dy, const S* sum_dy_xhat,
                                   bool batch_stats, D* dx, int64_t n) {
  const S count = S(l.count());
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    const int64_t c = (i / l.inner) % l.channels;
    const S s = invstd[c];
    const S scale = (weight ? weight[c] : S(1)) * s;
    const S mean_dy = batch_stats ? sum_dy[c] / count : S(0);
    const S mean_dy_xhat = batch_stats ? sum_dy_xhat[c] / count : S(0);
    const S g = relu_masked(x, dy, i, c, mean, invstd, weight, bias, relu);
    store(dx, i, batch_norm_train_dx(g, (S(load(x, i)) - mean[c]) * s, scale, mean_dy, mean_dy_xhat));
  }
}

// ---- launchers ----

namespace {

ChannelLayout channel_layout(const Shape& shape) {
  ChannelLayout l;
  l.batch = shape[0];
  l.channels = shape[1];
  for (int64_t d = 2; d < shape.dim(); ++d) l.inner *= shape[d];
  return l;
}

// A per-channel tensor in the statistics dtype (undefined stays undefined).
Tensor as_stats(const Tensor& t, DType stats) { return converted(t, stats); }

template <class S>
const S* optional_data(const Tensor& t) {
  return t.defined() ? t.data<S>() : nullptr;
}

unsigned channel_blocks(int64_t channels) {
  return static_cast<unsigned>(channels < kMaxBlocks ? channels : kMaxBlocks);
}

template <class S>
void update_running(const Tensor& running, const Tensor& stat, double momentum, bool unbiased, int64_t count) {
  if (!running.defined()) return;
  dispatch_floating("batch_norm", running.dtype(), [&](auto tag) {
    using R = decltype(tag);
    launch_1d("batch_norm (running stats)", running.numel(), running_update_kernel<device_t<R>, S>,
              device_data<R>(running), stat.data<S>(), running.numel(), momentum, unbiased, count);
  });
}

}  // namespace

// ---- entry points ----

void batch_norm_stats(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, double momentum,
                      double eps, const Tensor& mean, const Tensor& invstd) {
  const ChannelLayout l = channel_layout(x.shape());
  const Tensor var = empty(Shape{l.channels}, TensorOptions(mean.dtype()).device(x.device()));
  dispatch_floating("batch_norm", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using S = compute_t<T>;
    channel_stats_kernel<device_t<T>, S><<<channel_blocks(l.channels), kThreadsPerBlock, 0, current_stream()>>>(
        device_data<T>(x), l, S(eps), mean.data<S>(), var.data<S>(), invstd.data<S>());
    EMBER_CUDA_CHECK_LAUNCH("batch_norm (statistics)");
    update_running<S>(running_mean, mean, momentum, false, l.count());
    update_running<S>(running_var, var, momentum, true, l.count());
  });
}

void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& weight,
                      const Tensor& bias, bool relu, const Tensor& residual, const Tensor& y) {
  const ChannelLayout l = channel_layout(x.shape());
  const DType sd = batch_norm_stats_dtype(x.dtype());
  const Tensor m = as_stats(mean, sd), s = as_stats(invstd, sd), w = as_stats(weight, sd), b = as_stats(bias, sd);
  dispatch_floating("batch_norm", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using S = compute_t<T>;
    launch_1d("batch_norm", x.numel(), apply_kernel<device_t<T>, S>, device_data<T>(x), l, m.data<S>(), s.data<S>(),
              optional_data<S>(w), optional_data<S>(b), relu,
              residual.defined() ? device_data<T>(residual) : nullptr, device_data<T>(y), x.numel());
  });
}

void batch_norm_backward(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                         const Tensor& weight, const Tensor& bias, bool relu, bool batch_stats, const Tensor& dx,
                         const Tensor& dweight, const Tensor& dbias) {
  const ChannelLayout l = channel_layout(x.shape());
  const DType sd = batch_norm_stats_dtype(x.dtype());
  const Tensor m = as_stats(mean, sd), s = as_stats(invstd, sd), w = as_stats(weight, sd), b = as_stats(bias, sd);
  const TensorOptions stats = TensorOptions().dtype(sd).device(x.device());
  const Tensor sum_dy = empty(Shape{l.channels}, stats), sum_dy_xhat = empty(Shape{l.channels}, stats);
  dispatch_floating("batch_norm_backward", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using D = device_t<T>;
    using S = compute_t<T>;
    backward_sums_kernel<D, S><<<channel_blocks(l.channels), kThreadsPerBlock, 0, current_stream()>>>(
        device_data<T>(x), device_data<T>(dy), l, m.data<S>(), s.data<S>(), optional_data<S>(w), optional_data<S>(b),
        relu, sum_dy.data<S>(), sum_dy_xhat.data<S>());
    EMBER_CUDA_CHECK_LAUNCH("batch_norm_backward (sums)");
    if (dx.defined())
      launch_1d("batch_norm_backward", x.numel(), backward_dx_kernel<D, S>, device_data<T>(x), device_data<T>(dy), l,
                m.data<S>(), s.data<S>(), optional_data<S>(w), optional_data<S>(b), relu, sum_dy.data<S>(),
                sum_dy_xhat.data<S>(), batch_stats, device_data<T>(dx), x.numel());
  });
  // The parameter gradients take the dtype the entry point gave them (the weight's).
  if (dweight.defined()) copy_(dweight, sum_dy_xhat);
  if (dbias.defined()) copy_(dbias, sum_dy);
}

}  // namespace ember::kernels::cuda
