// CPU batch normalisation over x [N, C, *] (channels on dim 1): batch statistics
// with the running-stat update, the per-channel affine apply, and the fused
// backward. Formulas: kernels/batch_norm_math.h (shared with CUDA).
//   - statistics are fp32 for f16/f32 input and fp64 for f64 (gradcheck), whatever the
//     input's storage type; each (n, c) plane is summed in that type, planes in double.
//   - the variance uses shifted sums, sum(x - K) and sum((x - K)^2) with K a value of the
//     channel, so a channel whose mean is large next to its spread keeps its precision.
//   - plane sums are `omp simd` reductions (vectorised: the order within a plane is the
//     compiler's, fixed for a build, so results stay deterministic).
//   - every pass walks the (n, c) planes in memory order, split between the threads, and the
//     sums add a channel's plane sums in double over n = 0, 1, ... (kernels/cpu/channel_planes.h):
//     the same bits whatever the threads. apply and backward's dx take a precomputed
//     per-channel scale and shift.
//   - with a ReLU fused after it, apply clamps in the same pass, and backward recomputes each
//     value as apply rounded it (the same scale, shift and batch_norm_affine) to mask dy: no
//     ReLU pass either way, and no mask stored. A residual block's end (batch norm, the
//     shortcut added, the ReLU) is one apply pass too.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/batch_norm_math.h"
#include "kernels/cpu/channel_planes.h"
#include "kernels/ops.h"

namespace ember::kernels::cpu {

#include "kernels/backend_into.inc"

namespace {

// Reads a per-channel tensor of any floating dtype as double (undefined: `fallback`).
std::vector<double> read_channels(const Tensor& t, int64_t channels, double fallback) {
  std::vector<double> out(static_cast<size_t>(channels), fallback);
  if (!t.defined()) return out;
  dispatch_floating("batch_norm", t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (int64_t c = 0; c < channels; ++c) out[static_cast<size_t>(c)] = static_cast<double>(compute_t<T>(p[c]));
  });
  return out;
}

void write_channels(const Tensor& t, const std::vector<double>& values) {
  dispatch_floating("batch_norm", t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (size_t c = 0; c < values.size(); ++c) p[c] = T(static_cast<compute_t<T>>(values[c]));
  });
}

// Per channel, y = batch_norm_affine(x, scale, shift): scale = weight * invstd, shift = bias -
// mean * scale, computed in double and rounded once to the compute type C; apply and the fused
// ReLU's backward take them from here, so both round each value alike.
template <class C>
struct Affine {
  std::vector<C> scale, shift;
  Affine(const Tensor& mean, const Tensor& invstd, const Tensor& weight, const Tensor& bias, int64_t channels) {
    const std::vector<double> mu = read_channels(mean, channels, 0.0), inv = read_channels(invstd, channels, 1.0);
    const std::vector<double> w = read_channels(weight, channels, 1.0), b = read_channels(bias, channels, 0.0);
    for (size_t c = 0; c < mu.size(); ++c) {
      scale.push_back(C(w[c] * inv[c]));
      shift.push_back(C(b[c] - mu[c] * w[c] * inv[c]));
    }
  }
};

}  // namespace

void batch_norm_stats(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, double momentum,
                      double eps, const Tensor& mean, const Tensor& invstd) {
  const ChannelLayout l = channel_layout(x.shape());
  const int64_t count = l.count();
  std::vector<double> batch_mean(static_cast<size_t>(l.channels)), batch_var(static_cast<size_t>(l.channels));
  dispatch_floating("batch_norm", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* in = x.data<T>();
    std::vector<double> plane_sum(static_cast<size_t>(l.planes())), plane_sum_sq(static_cast<size_t>(l.planes()));
    for_each_plane(l, [&](int64_t p) {
      const C shift = C(in[l.plane(0, p % l.channels)]);
      const T* x_plane = in + p * l.inner;
      C s = C(0), s2 = C(0);
#pragma omp simd reduction(+ : s, s2)
      for (int64_t i = 0; i < l.inner; ++i) {
        const C d = C(x_plane[i]) - shift;
        s += d;
        s2 += d * d;
      }
      plane_sum[static_cast<size_t>(p)] = static_cast<double>(s);
      plane_sum_sq[static_cast<size_t>(p)] = static_cast<double>(s2);
    });
    for (int64_t c = 0; c < l.channels; ++c) {
      const double sum = sum_over_batch(l, plane_sum, c), sum_sq = sum_over_batch(l, plane_sum_sq, c);
      const double centred = sum / static_cast<double>(count);
      batch_mean[static_cast<size_t>(c)] = static_cast<double>(C(in[l.plane(0, c)])) + centred;
      batch_var[static_cast<size_t>(c)] = std::max(0.0, sum_sq / static_cast<double>(count) - centred * centred);
    }
  });
  std::vector<double> inv(static_cast<size_t>(l.channels));
  for (size_t c = 0; c < inv.size(); ++c) inv[c] = batch_norm_invstd(batch_var[c], eps);
  write_channels(mean, batch_mean);
  write_channels(invstd, inv);
  // The running statistics: batch_norm_running_update, in double (shared with CUDA).
  const auto update_running = [&](const Tensor& running, const std::vector<double>& stat, bool unbiased) {
    if (!running.defined()) return;
    std::vector<double> r = read_channels(running, l.channels, 0.0);
    for (size_t c = 0; c < r.size(); ++c) r[c] = batch_norm_running_update(r[c], stat[c], momentum, unbiased, count);
    write_channels(running, r);
  };
  update_running(running_mean, batch_mean, false);
  update_running(running_var, batch_var, true);
}

void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& weight,
                      const Tensor& bias, bool relu, const Tensor& residual, const Tensor& y) {
  const ChannelLayout l = channel_layout(x.shape());
  dispatch_floating("batch_norm", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const Affine<C> affine(mean, invstd, weight, bias, l.channels);
    const T* in = x.data<T>();
    const T* res = residual.defined() ? residual.data<T>() : nullptr;
    T* out = y.data<T>();
    const auto planes = [&](auto relu_constant, auto residual_constant) {
      constexpr bool kRelu = decltype(relu_constant)::value, kResidual = decltype(residual_constant)::value;
      for_each_plane(l, [&](int64_t p) {
        const size_t c = static_cast<size_t>(p % l.channels);
        const C s = affine.scale[c], t = affine.shift[c];
        const T* src = in + p * l.inner;
        T* dst = out + p * l.inner;
        for (int64_t i = 0; i < l.inner; ++i) {
          T v = T(batch_norm_affine(C(src[i]), s, t));
          if constexpr (kResidual) v = T(C(v) + C(res[p * l.inner + i]));
          dst[i] = kRelu ? T(batch_norm_relu(C(v))) : v;
        }
      });
    };
    const auto with_residual = [&](auto relu_constant) {
      if (res != nullptr) planes(relu_constant, std::true_type{});
      else planes(relu_constant, std::false_type{});
    };
    if (relu) with_residual(std::true_type{});
    else with_residual(std::false_type{});
  });
}

void batch_norm_backward(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                         const Tensor& weight, const Tensor& bias, bool relu, bool batch_stats, const Tensor& dx,
                         const Tensor& dweight, const Tensor& dbias) {
  const ChannelLayout l = channel_layout(x.shape());
  const std::vector<double> mu = read_channels(mean, l.channels, 0.0), inv = read_channels(invstd, l.channels, 1.0);
  const std::vector<double> w = read_channels(weight, l.channels, 1.0);
  std::vector<double> sum_dy(static_cast<size_t>(l.channels)), sum_dy_xhat(static_cast<size_t>(l.channels));
  const double count = static_cast<double>(l.count());
  dispatch_floating("batch_norm_backward", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* xs = x.data<T>();
    const T* gs = dy.data<T>();
    T* out = dx.defined() ? dx.data<T>() : nullptr;
    const Affine<C> affine(mean, invstd, weight, bias, relu ? l.channels : 0);
    const auto channels = [&](auto relu_constant) {
      using Relu = decltype(relu_constant);  // a type, so that the lambda below sees it uncaptured
      // channel k's dy, or with the fused ReLU dy where the forward's value was positive
      const auto grad_of = [&](size_t k) {
        const C a_scale = Relu::value ? affine.scale[k] : C(0), a_shift = Relu::value ? affine.shift[k] : C(0);
        return [a_scale, a_shift](T g, T xv) {
          if constexpr (Relu::value) return C(T(batch_norm_affine(C(xv), a_scale, a_shift))) > C(0) ? C(g) : C(0);
          else return C(g);
        };
      };
      std::vector<double> plane_dy(static_cast<size_t>(l.planes())), plane_dy_xc(static_cast<size_t>(l.planes()));
      for_each_plane(l, [&](int64_t p) {
        const size_t k = static_cast<size_t>(p % l.channels);
        const C m = C(mu[k]);
        const auto grad = grad_of(k);
        const T* xp = xs + p * l.inner;
        const T* gp = gs + p * l.inner;
        C a = C(0), b = C(0);
#pragma omp simd reduction(+ : a, b)
        for (int64_t i = 0; i < l.inner; ++i) {
          const C g = grad(gp[i], xp[i]);
          a += g;
          b += g * (C(xp[i]) - m);
        }
        plane_dy[static_cast<size_t>(p)] = static_cast<double>(a);
        plane_dy_xc[static_cast<size_t>(p)] = static_cast<double>(b);
      });
      for (int64_t c = 0; c < l.channels; ++c) {
        sum_dy[static_cast<size_t>(c)] = sum_over_batch(l, plane_dy, c);
        sum_dy_xhat[static_cast<size_t>(c)] = sum_over_batch(l, plane_dy_xc, c) * static_cast<double>(C(inv[static_cast<size_t>(c)]));
      }
      if (!out) return;
      for_each_plane(l, [&](int64_t p) {
        const size_t k = static_cast<size_t>(p % l.channels);
        const C m = C(mu[k]), s = C(inv[k]);
        const auto grad = grad_of(k);
        const C scale = C(w[k]) * s;
        const C mean_dy = batch_stats ? C(sum_dy[k] / count) : C(0), mean_dy_xhat = batch_stats ? C(sum_dy_xhat[k] / count) : C(0);
        const T* xp = xs + p * l.inner;
        const T* gp = gs + p * l.inner;
        T* op = out + p * l.inner;
        for (int64_t i = 0; i < l.inner; ++i)
          op[i] = T(batch_norm_train_dx(grad(gp[i], xp[i]), (C(xp[i]) - m) * s, scale, mean_dy, mean_dy_xhat));
      });
    };
    if (relu) channels(std::true_type{});
    else channels(std::false_type{});
  });
  if (dweight.defined()) write_channels(dweight, sum_dy_xhat);
  if (dbias.defined()) write_channels(dbias, sum_dy);
}

}  // namespace ember::kernels::cpu
