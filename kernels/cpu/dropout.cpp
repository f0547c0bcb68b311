// CPU dropout: y = x * keep(i) / (1 - p) (dropout_apply), the mask drawn from Philox at a given
// generator state (kernels/dropout_math.h, shared with CUDA). Backward is the
// same call on dy with the same state: the mask is recomputed, never stored.
// Each Philox counter yields 4 lanes, one Philox call for four elements (for_each_counter); feature
// dropout (groups of elements sharing one draw) walks groups, one draw each.
#include <algorithm>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/philox_counters.h"
#include "kernels/dropout_math.h"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

#include "kernels/backend_api.inc"

void dropout(const Tensor& x, double p, GeneratorState state, int64_t group, const Tensor& y) {
  const float keep_p = static_cast<float>(p);
  dispatch_floating("dropout", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    const C scale = C(dropout_scale(keep_p));
    const int64_t n = x.numel();
    if (group > 1) {
      parallel_for(n / group, std::max<int64_t>(1, kParallelGrain / group), [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          const bool keep = dropout_keep(state.seed, state.offset, static_cast<uint64_t>(g), keep_p);
          for (int64_t i = g * group; i < (g + 1) * group; ++i) out[i] = T(dropout_apply(C(in[i]), keep, scale));
        }
      });
      return;
    }
    parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for_each_counter(state, 4, begin, end, [&](int64_t i, const PhiloxOutput& r) {
        out[i] = T(dropout_apply(C(in[i]), dropout_keep_bits(r.v[i % 4], keep_p), scale));
      });
    });
  });
}

}  // namespace ember::kernels::cpu
