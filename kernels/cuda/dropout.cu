// CUDA dropout: y = x * keep(i) / (1 - p) (dropout_apply), the mask drawn from Philox at a given
// generator state (kernels/dropout_math.h, shared with the CPU), so the same seed
// gives the same mask on both backends. Backward is the same call on dy with the
// same state: the mask is recomputed, never stored. One thread per Philox counter
// serves its 4 lanes (elements 4k .. 4k+3), as the CPU loop does. Feature dropout (groups of
// elements sharing one draw) runs one thread per element, each drawing its group's verdict.
#include "kernels/cuda/device_utils.cuh"
#include "kernels/dropout_math.h"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember::kernels::cuda {

template <class D, class C>
__global__ void dropout_kernel(const D* x, D* y, int64_t n, uint64_t seed, uint64_t offset, float p) {
  const int64_t counters = static_cast<int64_t>(dropout_counters(n));
  const C scale = C(dropout_scale(p));
  for (int64_t k = thread_index(); k < counters; k += thread_count()) {
    const PhiloxOutput r = philox4x32(seed, offset + static_cast<uint64_t>(k));
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t i = 4 * k + lane;
      if (i >= n) break;
      store(y, i, dropout_apply(C(load(x, i)), dropout_keep_bits(r.v[lane], p), scale));
    }
  }
}

template <class D, class C>
__global__ void feature_dropout_kernel(const D* x, D* y, int64_t n, int64_t group, uint64_t seed, uint64_t offset,
                                       float p) {
  const C scale = C(dropout_scale(p));
  for (int64_t i = thread_index(); i < n; i += thread_count())
    store(y, i, dropout_apply(C(load(x, i)), dropout_keep(seed, offset, static_cast<uint64_t>(i / group), p), scale));
}

void dropout(const Tensor& x, double p, GeneratorState state, int64_t group, const Tensor& y) {
  const int64_t n = x.numel();
  dispatch_floating("dropout", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (group > 1) {
      launch_1d("dropout", n, feature_dropout_kernel<device_t<T>, compute_t<T>>, device_data<T>(x), device_data<T>(y),
                n, group, state.seed, state.offset, static_cast<float>(p));
      return;
    }
    launch_1d("dropout", static_cast<int64_t>(dropout_counters(n)), dropout_kernel<device_t<T>, compute_t<T>>,
              device_data<T>(x), device_data<T>(y), n, state.seed, state.offset, static_cast<float>(p));
  });
}

}  // namespace ember::kernels::cuda
