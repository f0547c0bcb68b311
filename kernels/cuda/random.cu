// CUDA fillers for factories: arange and Philox uniform/normal draws. Element i
// is computed exactly as in kernels/cpu/random.cpp (philox_uniform/philox_normal
// of core/philox.h at the same seed, offset and i), so manual_seed gives the same
// numbers on both backends, bit for bit: the draws use core/portable_math.h, and the final
// scale-and-shift is one explicit fma on both sides (scale_and_shift).
#include "core/philox.h"
#include "kernels/cuda/device_utils.cuh"
#include "kernels/ops.h"

namespace ember::kernels::cuda {

namespace {

template <class D>
__global__ void arange_kernel(D* p, int64_t n, double start, double step) {
  for (int64_t i = thread_index(); i < n; i += thread_count())
    store(p, i, fma(step, static_cast<double>(i), start));  // one rounding, as on the CPU
}

template <class D>
__global__ void uniform_kernel(D* p, int64_t n, GeneratorState state, float low, float span) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    const float u = philox_uniform(state.seed, state.offset, static_cast<uint64_t>(i));
    store(p, i, scale_and_shift(1.0f - u, span, low));  // [low, high): u is in (0, 1]
  }
}

template <class D>
__global__ void normal_kernel(D* p, int64_t n, GeneratorState state, float mean, float std) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    const float z = philox_normal(state.seed, state.offset, static_cast<uint64_t>(i));
    store(p, i, scale_and_shift(z, std, mean));
  }
}

}  // namespace

void arange_(const Tensor& t, double start, double step) {
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("arange", t.numel(), arange_kernel<device_t<T>>, device_data<T>(t), t.numel(), start, step);
  });
}

void uniform_(const Tensor& t, GeneratorState state, double low, double high) {
  dispatch_floating("uniform_", t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("uniform_", t.numel(), uniform_kernel<device_t<T>>, device_data<T>(t), t.numel(), state,
              static_cast<float>(low), static_cast<float>(high - low));
  });
}

void normal_(const Tensor& t, GeneratorState state, double mean, double std) {
  dispatch_floating("normal_", t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("normal_", t.numel(), normal_kernel<device_t<T>>, device_data<T>(t), t.numel(), state,
              static_cast<float>(mean), static_cast<float>(std));
  });
}

}  // namespace ember::kernels::cuda
