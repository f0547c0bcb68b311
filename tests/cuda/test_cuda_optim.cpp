// CUDA vs CPU for the fused optimizer updates (kernels/cuda/optim.cu). Skipped without a GPU.
//
// Tolerances: both sides run the same fp32 formula (kernels/functors.h adam_update) with the
// same host-computed coefficients; only sqrt/division rounding and fused multiply-adds differ,
// a few fp32 ulps of values near 1: kF32Tol. f16 stores round after fp32 math; one fp32 ulp can
// flip that rounding by half an f16 ulp (2^-11 relative): kF16Tol.
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "tests/support/op_contract.h"

using namespace ember;
using test::expect_close;

namespace {

constexpr double kF32Tol = 1e-5;
constexpr double kF16Tol = 2e-3;

struct AdamState {
  Tensor param, exp_avg, exp_avg_sq;
};

// Three adam_step_ calls on `device`, from copies of the CPU tensors, with a new gradient each step.
AdamState run_adam(const AdamState& start, const std::vector<Tensor>& grads, const kernels::AdamOptions& options,
                   Device device) {
  // clone(): to() may return the same tensor on the same device, and the update is in place.
  AdamState s{start.param.to(device).clone(), start.exp_avg.to(device).clone(), start.exp_avg_sq.to(device).clone()};
  for (size_t step = 0; step < grads.size(); ++step)
    kernels::adam_step_(s.param, grads[step].to(device), s.exp_avg, s.exp_avg_sq, options,
                        static_cast<int64_t>(step) + 1);
  return {s.param.to(kCPU), s.exp_avg.to(kCPU), s.exp_avg_sq.to(kCPU)};
}

}  // namespace

EMBER_CUDA_TEST_CASE("adam_step_ on cuda matches the CPU (Adam and AdamW, f32 and f16)", "[adam]") {
  for (DType dtype : {kFloat32, kFloat16}) {
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(1000003), int64_t(0)}) {
      const TensorOptions to(dtype);
      const AdamState start{randn({n}, to), zeros({n}, to), zeros({n}, to)};
      const std::vector<Tensor> grads = {randn({n}, to), randn({n}, to), randn({n}, to)};
      for (bool decoupled : {false, true}) {
        kernels::AdamOptions options;
        options.lr = 0.01;
        options.weight_decay = 0.1;
        options.decoupled = decoupled;
        const std::string name = std::string(decoupled ? "adamw " : "adam ") + dtype_name(dtype) + " n=" +
                                 std::to_string(n);
        const double tol = dtype == kFloat16 ? kF16Tol : kF32Tol;
        const AdamState gpu = run_adam(start, grads, options, kCUDA);
        const AdamState cpu = run_adam(start, grads, options, kCPU);
        expect_close(gpu.param, cpu.param, tol, name + " param");
        expect_close(gpu.exp_avg, cpu.exp_avg, tol, name + " exp_avg");
        expect_close(gpu.exp_avg_sq, cpu.exp_avg_sq, tol, name + " exp_avg_sq");
      }
    }
  }
}
