#pragma once
// Batch normalisation math shared by the CPU and CUDA backends (PyTorch's
// definitions). Per channel, over the M = N * H * W values of a batch:
//   mean, var = biased batch variance, invstd = 1 / sqrt(var + eps)
//   y = (x - mean) * invstd * weight + bias
//   running = (1 - momentum) * running + momentum * batch_stat, with the unbiased
//   variance var * M / (M - 1) for running_var, computed in double on both backends
//   whatever the dtypes of x and of the buffers (batch_norm_running_update)
//   training backward (fused): with xhat = (x - mean) * invstd,
//     dbias = sum(dy), dweight = sum(dy * xhat),
//     dx = weight * invstd * (dy - dbias / M - xhat * dweight / M)
//   eval backward: the statistics are constants, dx = weight * invstd * dy.
//   with a ReLU fused after it (batch_norm_relu): y = max(bn(x), 0), and backward takes
//   dy where bn(x), as forward rounded it, was positive, and 0 elsewhere.
#include <cmath>
#include <cstdint>

#include "core/hd.h"
#include "kernels/functors.h"

namespace ember::kernels {

template <class T>
EMBER_HD T batch_norm_invstd(T biased_var, T eps) {
  return T(1) / math::sqrt(biased_var + eps);
}

template <class T>
EMBER_HD T batch_norm_running(T running, T batch_stat, T momentum) {
  return (T(1) - momentum) * running + momentum * batch_stat;
}

// The unbiased variance for running_var; a single value has none, so its biased one (0) is kept.
template <class T>
EMBER_HD T batch_norm_unbiased(T biased_var, int64_t count) {
  return count > 1 ? biased_var * T(count) / T(count - 1) : biased_var;
}

// One channel's running-statistic update, the one both backends run: in double whatever the
// dtypes of x and of the running buffer (an f64 buffer next to f32 or f16 x keeps its precision).
// `running` is the buffer's value and `batch_stat` the batch mean, or the biased batch variance
// when `unbiased` (it is then converted with batch_norm_unbiased over `count` values); the
// caller rounds the result to the buffer's dtype through its compute type, as every store does.
EMBER_HD double batch_norm_running_update(double running, double batch_stat, double momentum, bool unbiased,
                                          int64_t count) {
  return batch_norm_running(running, unbiased ? batch_norm_unbiased(batch_stat, count) : batch_stat, momentum);
}

// y = x * scale + shift (scale = weight * invstd, shift = bias - mean * scale), one rounding where
// the machine has a fused multiply-add. With a ReLU fused after it, backward recomputes this
// value to know where y was positive, so forward and backward must round alike: an explicit
// fma (or, without one, a product and a sum the compiler cannot contract), never whatever
// contraction the compiler chooses in each loop.
template <class T>
EMBER_HD T batch_norm_affine(T x, T scale, T shift) {
#if defined(__CUDA_ARCH__)
  return ::fma(x, scale, shift);
#elif defined(__FMA__)
  return std::fma(x, scale, shift);
#else
  return x * scale + shift;
#endif
}

// ReLU's rule (core/unary_ops.def): negatives to zero, NaN kept.
template <class T>
EMBER_HD T batch_norm_relu(T y) {
  return y < T(0) ? T(0) : y;
}

// dx of the training form: scale = weight * invstd, mean_dy = sum(dy) / M, mean_dy_xhat = sum(dy * xhat) / M.
template <class T>
EMBER_HD T batch_norm_train_dx(T dy, T xhat, T scale, T mean_dy, T mean_dy_xhat) {
  return scale * (dy - mean_dy - xhat * mean_dy_xhat);
}

}  // namespace ember::kernels
