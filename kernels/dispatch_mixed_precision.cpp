// Checked entry point of the mixed-precision kernel (unscale-and-check); the
// other families are in the other kernels/dispatch_*.cpp.
#include <cmath>

#include "core/cuda_runtime.h"
#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels {

void unscale_grad_(const Tensor& master_grad, const Tensor& grad, double inv_scale, bool accumulate,
                   const Tensor& found_inf) {
  constexpr const char* op = "unscale_grad";
  check_defined(master_grad, op, "master_grad");
  check_defined(grad, op, "grad");
  check_defined(found_inf, op, "found_inf");
  check_dtype(master_grad, DType::f32, op, "master_grad");
  check_dtype(found_inf, DType::f32, op, "found_inf");
  check_floating(grad, op);
  check_same_device(master_grad, grad, op);
  check_same_device(found_inf, grad, op);
  EMBER_CHECK(master_grad.shape() == grad.shape(),
              op << ": master gradient " << master_grad.shape() << " does not match gradient " << grad.shape());
  EMBER_CHECK(found_inf.numel() == 1, op << ": found_inf must hold one element, got " << found_inf.shape());
  EMBER_CHECK(std::isfinite(inv_scale) && inv_scale > 0.0,
              op << ": the inverse loss scale must be finite and positive, got " << inv_scale);
  OpNameScope scope(op);
  bump_version(master_grad, found_inf);  // found_inf is written only on inf/NaN, but may be: counted as a write
  EMBER_BACKEND(grad.device(), unscale_grad_, master_grad, grad, inv_scale, accumulate, found_inf);
}

}  // namespace ember::kernels
