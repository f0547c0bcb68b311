// CUDA unscale-and-check for mixed precision: one fused pass per parameter, the
// per-element rule is unscale_grad (kernels/functors.h), as on the CPU. The inf/NaN
// flag stays on the device: the host reads it once per step, not once per parameter.
#include "kernels/cuda/device_utils.cuh"
#include "kernels/functors.h"

namespace ember::kernels::cuda {

namespace {

// Every thread that meets a non-finite value writes the same 1, so the race is benign.
template <class D>
__global__ void unscale_grad_kernel(float* master, const D* grad, int64_t n, float inv_scale, bool accumulate,
                                    float* found_inf) {
  bool nonfinite = false;
  for (int64_t i = thread_index(); i < n; i += thread_count())
    master[i] = unscale_grad(load(grad, i), inv_scale, master[i], accumulate, &nonfinite);
  if (nonfinite) *found_inf = 1.0f;
}

}  // namespace

void unscale_grad_(const Tensor& master_grad, const Tensor& grad, double inv_scale, bool accumulate,
                   const Tensor& found_inf) {
  dispatch_floating("unscale_grad", grad.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("unscale_grad", grad.numel(), unscale_grad_kernel<device_t<T>>, master_grad.data<float>(),
              device_data<T>(grad), grad.numel(), static_cast<float>(inv_scale), accumulate,
              found_inf.data<float>());
  });
}

}  // namespace ember::kernels::cuda
