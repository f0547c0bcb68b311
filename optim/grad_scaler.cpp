#include "optim/grad_scaler.h"

#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "core/error.h"
#include "optim/state_dict.h"

namespace ember::optim {

namespace {
// Below this, 1 / scale overflows a float (the unscale kernels compute in fp32).
constexpr double kMinScale = 1.0 / static_cast<double>(std::numeric_limits<float>::max());
}  // namespace

GradScaler::GradScaler(const GradScalerOptions& options) : options_(options), scale_(options.init_scale) {
  EMBER_CHECK(std::isfinite(options.init_scale) && options.init_scale >= kMinScale,
              "GradScaler: init_scale must be finite and at least " << kMinScale << ", got " << options.init_scale);
  EMBER_CHECK(options.growth_factor >= 1.0 && std::isfinite(options.growth_factor),
              "GradScaler: growth_factor must be finite and >= 1, got " << options.growth_factor);
  EMBER_CHECK(options.backoff_factor > 0.0 && options.backoff_factor < 1.0,
              "GradScaler: backoff_factor must be in (0, 1), got " << options.backoff_factor);
  EMBER_CHECK(options.growth_interval >= 1,
              "GradScaler: growth_interval must be at least 1 step, got " << options.growth_interval);
}

Tensor GradScaler::scale_loss(const Tensor& loss) const { return mul(loss, scale_); }

void GradScaler::update(bool found_inf) {
  if (!found_inf) {
    consecutive_skips_ = 0;
    if (++growth_tracker_ >= options_.growth_interval) {
      // Growth stops where fp32 would overflow; PyTorch caps it the same way.
      const double grown = scale_ * options_.growth_factor;
      if (grown <= static_cast<double>(std::numeric_limits<float>::max())) scale_ = grown;
      growth_tracker_ = 0;
    }
    return;
  }
  ++skipped_steps_;
  ++consecutive_skips_;
  growth_tracker_ = 0;
  const double backed_off = scale_ * options_.backoff_factor;
  EMBER_CHECK(backed_off >= kMinScale,
              "GradScaler: the loss scale underflowed to " << backed_off << " after " << consecutive_skips_
                  << " consecutive steps with inf/NaN gradients (it must stay >= " << kMinScale
                  << "): the gradients are not finite at any scale, so the model has diverged; lower the "
                     "learning rate or train with precision = fp32");
  scale_ = backed_off;
}

NamedTensors GradScaler::state_dict() const {
  return {{"scale", state_scalar(scale_)},
          {"growth_tracker", state_count(growth_tracker_)},
          {"skipped_steps", state_count(skipped_steps_)},
          {"consecutive_skips", state_count(consecutive_skips_)}};
}

void GradScaler::load_state_dict(const TensorMap& state) {
  StateDictReader reader(state, "GradScaler");
  const double scale = reader.scalar("scale", scale_);
  EMBER_CHECK(std::isfinite(scale) && scale >= kMinScale,
              "GradScaler state: scale must be finite and at least " << kMinScale << ", got " << scale);
  scale_ = scale;
  growth_tracker_ = reader.count("growth_tracker", growth_tracker_);
  skipped_steps_ = reader.count("skipped_steps", skipped_steps_);
  consecutive_skips_ = reader.count("consecutive_skips", consecutive_skips_);
  reader.finish();
}

}  // namespace ember::optim
