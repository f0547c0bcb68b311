#pragma once
// optim::GradScaler: dynamic loss scaling for fp16 training, with PyTorch's rules.
// fp16 gradients of small magnitude flush to zero; multiplying the loss by a large
// scale keeps them representable, and the gradients are divided by it again (in
// fp32) before the update. The scale adapts:
//
//   start at 2^16; after 2000 consecutive steps with finite gradients, x2;
//   a step with any inf/NaN gradient is skipped and the scale is x0.5.
//
//   ember::optim::GradScaler scaler;                   // GradScalerOptions() for other constants
//   Tensor scaled = scaler.scale_loss(loss);           // loss * scale(), differentiable
//   scaled.backward();
//   ... unscale the gradients with 1 / scaler.scale() and check them (kernels::unscale_grad_) ...
//   if (!found_inf) optimizer.step();
//   scaler.update(found_inf);                          // once per optimizer step (effective batch)
//
// train::MixedPrecisionOptimizer drives it; on its own it only keeps the scale.
#include <cstdint>

#include "core/named_tensors.h"
#include "core/tensor.h"

namespace ember::optim {

struct GradScalerOptions {
  double init_scale = 65536.0;   // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;  // finite steps before the scale grows
};

class GradScaler {
 public:
  explicit GradScaler(const GradScalerOptions& options = {});

  double scale() const { return scale_; }
  // loss * scale(), recorded by autograd (the gradient seed is scaled with it).
  Tensor scale_loss(const Tensor& loss) const;
  // Records the outcome of one optimizer step. Throws when the scale has fallen so far that
  // 1 / scale is no longer a finite float: the gradients are not finite at any scale.
  void update(bool found_inf);

  int64_t growth_tracker() const { return growth_tracker_; }  // finite steps since the last change
  int64_t skipped_steps() const { return skipped_steps_; }    // total steps skipped for inf/NaN
  int64_t consecutive_skips() const { return consecutive_skips_; }
  const GradScalerOptions& options() const { return options_; }

  // "scale", "growth_tracker", "skipped_steps", "consecutive_skips": what resuming needs.
  NamedTensors state_dict() const;
  void load_state_dict(const TensorMap& state);

 private:
  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  int64_t skipped_steps_ = 0;
  int64_t consecutive_skips_ = 0;
};

}  // namespace ember::optim
