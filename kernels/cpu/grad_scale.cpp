// CPU unscale-and-check for mixed precision: one fused pass per parameter
// (the per-element rule is unscale_grad in kernels/functors.h).
#include "kernels/cpu/parallel.h"
#include "kernels/functors.h"

namespace ember::kernels::cpu {

void unscale_grad_(const Tensor& master_grad, const Tensor& grad, double inv_scale, bool accumulate,
                   const Tensor& found_inf) {
  float* master = master_grad.data<float>();
  const float inv = static_cast<float>(inv_scale);
  bool nonfinite = false;
  dispatch_floating("unscale_grad", grad.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* g = grad.data<T>();
    const int64_t n = grad.numel();
#pragma omp parallel for schedule(static) reduction(|| : nonfinite) if (n > kParallelGrain && !omp_in_parallel())
    for (int64_t i = 0; i < n; ++i) {
      bool bad = false;
      master[i] = unscale_grad(g[i], inv, master[i], accumulate, &bad);
      nonfinite = nonfinite || bad;
    }
  });
  if (nonfinite) found_inf.data<float>()[0] = 1.0f;
}

}  // namespace ember::kernels::cpu
