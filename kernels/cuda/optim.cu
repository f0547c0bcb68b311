// CUDA optimizer updates: one fused pass per parameter, the per-element rule is
// sgd_update (kernels/functors.h), the same one kernels/cpu/optim.cpp calls.
#include "kernels/cuda/device_utils.cuh"
#include "kernels/functors.h"

namespace ember::kernels::cuda {

namespace {

// Plain values of SgdOptions in the compute type, passed by value to the kernel.
template <class C>
struct SgdParams {
  C lr, momentum, dampening, weight_decay;
  bool nesterov, first_step;
};

// buf is null without momentum (the buffer is then never read or written).
template <class D, class C>
__global__ void sgd_step_kernel(D* param, const D* grad, D* buf, int64_t n, SgdParams<C> o) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    C b = buf ? C(load(buf, i)) : C(0);
    store(param, i,
          sgd_update<C>(C(load(param, i)), C(load(grad, i)), &b, o.lr, o.momentum, o.dampening, o.weight_decay,
                        o.nesterov, o.first_step));
    if (buf) store(buf, i, b);
  }
}

}  // namespace

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdOptions& options,
               bool first_step) {
  dispatch_floating("sgd_step", param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const SgdParams<C> o{C(options.lr),           C(options.momentum), C(options.dampening),
                         C(options.weight_decay), options.nesterov,    first_step};
    device_t<T>* buf = options.momentum != 0.0 ? device_data<T>(momentum_buffer) : nullptr;
    launch_1d("sgd_step", param.numel(), sgd_step_kernel<device_t<T>, C>, device_data<T>(param),
              device_data<T>(grad), buf, param.numel(), o);
  });
}

// The per-step coefficients come by value, computed once on the host (adam_coefficients).
template <class D, class C>
__global__ void adam_step_kernel(D* param, const D* grad, D* exp_avg, D* exp_avg_sq, int64_t n,
                                 AdamCoefficients<C> c) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    C m = C(load(exp_avg, i));
    C v = C(load(exp_avg_sq, i));
    store(param, i, adam_update<C>(C(load(param, i)), C(load(grad, i)), &m, &v, c));
    store(exp_avg, i, m);
    store(exp_avg_sq, i, v);
  }
}

void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const AdamOptions& options, int64_t step) {
  dispatch_floating("adam_step", param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    launch_1d("adam_step", param.numel(), adam_step_kernel<device_t<T>, C>, device_data<T>(param),
              device_data<T>(grad), device_data<T>(exp_avg), device_data<T>(exp_avg_sq), param.numel(),
              adam_coefficients<C>(options, step));
  });
}

}  // namespace ember::kernels::cuda
