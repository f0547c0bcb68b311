// CPU fillers for factories: arange and Philox uniform/normal draws. The same
// (seed, offset) gives the same numbers as kernels/cuda/random.cu.
#include <cmath>

#include "core/philox.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/philox_counters.h"
#include "kernels/ops.h"

namespace ember::kernels::cpu {

void arange_(const Tensor& t, double start, double step) {
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double v = std::fma(step, static_cast<double>(i), start);  // one rounding, as on CUDA
      if constexpr (std::is_same_v<T, Half>) p[i] = Half(static_cast<float>(v));
      else p[i] = static_cast<T>(v);
    }
  });
}

void uniform_(const Tensor& t, GeneratorState state, double low, double high) {
  dispatch_floating("uniform_", t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    const float lo = static_cast<float>(low), span = static_cast<float>(high - low);
    parallel_for(t.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for_each_counter(state, 4, begin, end, [&](int64_t i, const PhiloxOutput& r) {
        p[i] = T(scale_and_shift(1.0f - philox_uniform_lane(r, static_cast<uint64_t>(i)), span, lo));
      });
    });
  });
}

void normal_(const Tensor& t, GeneratorState state, double mean, double std) {
  dispatch_floating("normal_", t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    const float m = static_cast<float>(mean), s = static_cast<float>(std);
    parallel_for(t.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for_each_counter(state, 2, begin, end, [&](int64_t i, const PhiloxOutput& r) {
        p[i] = T(scale_and_shift(philox_normal_lane(r, static_cast<uint64_t>(i)), s, m));
      });
    });
  });
}

}  // namespace ember::kernels::cpu
