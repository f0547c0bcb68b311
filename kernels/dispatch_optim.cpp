// Checked entry points of the fused optimizer updates, SGD and Adam/AdamW (kernels/{cpu,cuda}/optim).
#include <utility>

#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"

namespace ember::kernels {

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdOptions& options,
               bool first_step) {
  check_same_shape(param, grad, "sgd_step");
  check_compatible(param, grad, "sgd_step");
  if (options.momentum != 0.0) {
    check_same_shape(param, momentum_buffer, "sgd_step");
    check_compatible(param, momentum_buffer, "sgd_step");
  }
  // Without momentum the buffer is neither read nor written.
  if (options.momentum != 0.0) bump_version(param, momentum_buffer);
  else bump_version(param);
  EMBER_BACKEND(param.device(), sgd_step_, param, grad, momentum_buffer, options, first_step);
}

void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const AdamOptions& options, int64_t step) {
  const char* op = options.decoupled ? "adamw_step" : "adam_step";
  check_defined(param, op, "param");
  check_floating(param, op);
  const std::pair<const Tensor*, const char*> others[] = {{&grad, "grad"}, {&exp_avg, "exp_avg"},
                                                          {&exp_avg_sq, "exp_avg_sq"}};
  for (const auto& [t, name] : others) {
    check_defined(*t, op, name);
    check_same_shape(param, *t, op);
    check_compatible(param, *t, op);
  }
  // step 0 would divide by the bias correction 1 - beta^0 = 0.
  EMBER_CHECK(step >= 1, op << ": step must be >= 1 (the first update is step 1), got " << step);
  bump_version(param, exp_avg, exp_avg_sq);
  EMBER_BACKEND(param.device(), adam_step_, param, grad, exp_avg, exp_avg_sq, options, step);
}

}  // namespace ember::kernels
