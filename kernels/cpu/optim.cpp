// CPU optimizer updates: one fused pass per parameter (kernels/functors.h).
#include "kernels/cpu/parallel.h"
#include "kernels/functors.h"

namespace ember::kernels::cpu {

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdOptions& o,
               bool first_step) {
  dispatch_floating("sgd_step", param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* buf = o.momentum != 0.0 ? momentum_buffer.data<T>() : nullptr;
    parallel_for(param.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C b = buf ? C(buf[i]) : C(0);
        p[i] = T(sgd_update<C>(C(p[i]), C(g[i]), &b, C(o.lr), C(o.momentum), C(o.dampening), C(o.weight_decay),
                               o.nesterov, first_step));
        if (buf) buf[i] = T(b);
      }
    });
  });
}

void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const AdamOptions& options, int64_t step) {
  dispatch_floating("adam_step", param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const AdamCoefficients<C> c = adam_coefficients<C>(options, step);
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* m = exp_avg.data<T>();
    T* v = exp_avg_sq.data<T>();
    parallel_for(param.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C mi = C(m[i]);
        C vi = C(v[i]);
        p[i] = T(adam_update<C>(C(p[i]), C(g[i]), &mi, &vi, c));
        m[i] = T(mi);
        v[i] = T(vi);
      }
    });
  });
}

}  // namespace ember::kernels::cpu
