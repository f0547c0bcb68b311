#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.h"

namespace ember::optim {

namespace {

constexpr double kPi = 3.14159265358979323846;

void check_lr(double lr, const char* schedule, const char* what) {
  EMBER_CHECK(std::isfinite(lr) && lr >= 0.0, schedule << ": " << what << " must be finite and >= 0, got " << lr);
}

void check_step(int64_t step, const char* schedule) {
  EMBER_CHECK(step >= 0, schedule << ": step must be >= 0, got " << step);
}

// From `start` at pct = 0 to `end` at pct = 1 along half a cosine (PyTorch's _annealing_cos).
double cosine_anneal(double start, double end, double pct) {
  return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1.0);
}

}  // namespace

void LrSchedule::apply(Optimizer& optimizer, int64_t step) const {
  const std::vector<Optimizer::Group>& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) optimizer.set_group_lr(g, group_lr(step, g, groups[g].initial_lr));
  const std::optional<double> momentum = momentum_at(step);
  if (!momentum) return;
  EMBER_CHECK(optimizer.has_momentum(), "OneCycle: cycle_momentum needs an optimizer with a momentum term (SGD's "
                                        "momentum, Adam's or AdamW's beta1); turn cycle_momentum off for this one");
  for (size_t g = 0; g < groups.size(); ++g) optimizer.set_group_momentum(g, *momentum);
}

ConstantLR::ConstantLR(double lr) : lr_(lr) { check_lr(lr, "ConstantLR", "lr"); }

double ConstantLR::group_lr(int64_t step, size_t /*group*/, double initial_lr) const {
  check_step(step, "ConstantLR");
  return initial_lr;
}

StepLR::StepLR(double base_lr, int64_t step_size, double gamma)
    : base_lr_(base_lr), step_size_(step_size), gamma_(gamma) {
  check_lr(base_lr, "StepLR", "base_lr");
  EMBER_CHECK(step_size >= 1, "StepLR: step_size must be >= 1, got " << step_size);
  EMBER_CHECK(gamma >= 0.0 && std::isfinite(gamma), "StepLR: gamma must be finite and >= 0, got " << gamma);
}

double StepLR::group_lr(int64_t step, size_t /*group*/, double initial_lr) const {
  check_step(step, "StepLR");
  return initial_lr * std::pow(gamma_, static_cast<double>(step / step_size_));
}

CosineWithWarmup::CosineWithWarmup(double base_lr, int64_t warmup_steps, int64_t total_steps, double min_lr,
                                   double warmup_start_factor)
    : base_lr_(base_lr),
      warmup_steps_(warmup_steps),
      total_steps_(total_steps),
      min_lr_(min_lr),
      warmup_start_factor_(warmup_start_factor) {
  check_lr(base_lr, "CosineWithWarmup", "base_lr");
  check_lr(min_lr, "CosineWithWarmup", "min_lr");
  EMBER_CHECK(min_lr <= base_lr, "CosineWithWarmup: min_lr " << min_lr << " exceeds base_lr " << base_lr);
  EMBER_CHECK(warmup_steps >= 0 && warmup_steps <= total_steps,
              "CosineWithWarmup: need 0 <= warmup_steps <= total_steps, got warmup_steps "
                  << warmup_steps << " and total_steps " << total_steps);
  EMBER_CHECK(warmup_start_factor >= 0.0 && warmup_start_factor <= 1.0,
              "CosineWithWarmup: warmup_start_factor must be in [0, 1], got " << warmup_start_factor);
}

double CosineWithWarmup::group_lr(int64_t step, size_t /*group*/, double initial_lr) const {
  check_step(step, "CosineWithWarmup");
  if (step < warmup_steps_) {
    const double pct = static_cast<double>(step) / static_cast<double>(warmup_steps_);
    return initial_lr * (warmup_start_factor_ + (1.0 - warmup_start_factor_) * pct);
  }
  const int64_t decay_steps = total_steps_ - warmup_steps_;
  if (decay_steps == 0) return min_lr_;  // all warm-up: nothing left to decay over
  const double pct = std::min(1.0, static_cast<double>(step - warmup_steps_) / static_cast<double>(decay_steps));
  return cosine_anneal(initial_lr, min_lr_, pct);  // min_lr is absolute, as CosineAnnealingLR's eta_min
}

OneCycle::OneCycle(double max_lr, int64_t total_steps, double pct_start, double div_factor, double final_div_factor,
                   bool cycle_momentum, double base_momentum, double max_momentum)
    : OneCycle(std::vector<double>{max_lr}, total_steps, pct_start, div_factor, final_div_factor, cycle_momentum,
               base_momentum, max_momentum) {}

OneCycle::OneCycle(std::vector<double> max_lrs, int64_t total_steps, double pct_start, double div_factor,
                   double final_div_factor, bool cycle_momentum, double base_momentum, double max_momentum)
    : max_lrs_(std::move(max_lrs)),
      div_factor_(div_factor),
      final_div_factor_(final_div_factor),
      cycle_momentum_(cycle_momentum),
      base_momentum_(base_momentum),
      max_momentum_(max_momentum),
      peak_step_(pct_start * static_cast<double>(total_steps) - 1.0),
      last_step_(static_cast<double>(total_steps) - 1.0) {
  EMBER_CHECK(!max_lrs_.empty(), "OneCycle: give a max_lr (one for every group, or one per group)");
  for (double max_lr : max_lrs_) check_lr(max_lr, "OneCycle", "max_lr");
  EMBER_CHECK(pct_start > 0.0 && pct_start < 1.0, "OneCycle: pct_start must be in (0, 1), got " << pct_start);
  EMBER_CHECK(div_factor > 0.0 && final_div_factor > 0.0,
              "OneCycle: div_factor and final_div_factor must be > 0, got " << div_factor << " and "
                                                                             << final_div_factor);
  // Both phases need a positive length, or the annealing fraction divides by zero.
  EMBER_CHECK(peak_step_ > 0.0 && last_step_ > peak_step_,
              "OneCycle: total_steps " << total_steps << " is too small for pct_start " << pct_start
                                       << " (each phase needs at least one step)");
  if (cycle_momentum)
    EMBER_CHECK(base_momentum >= 0.0 && base_momentum <= max_momentum && max_momentum < 1.0,
                "OneCycle: need 0 <= base_momentum <= max_momentum < 1, got base_momentum "
                    << base_momentum << " and max_momentum " << max_momentum);
}

OneCycle::Phase OneCycle::phase_at(int64_t step) const {
  check_step(step, "OneCycle");
  const double s = std::min(static_cast<double>(step), last_step_);
  if (s <= peak_step_) return {true, s / peak_step_};
  return {false, (s - peak_step_) / (last_step_ - peak_step_)};
}

double OneCycle::group_lr(int64_t step, size_t group, double /*initial_lr*/) const {
  const Phase phase = phase_at(step);
  EMBER_CHECK(max_lrs_.size() == 1 || group < max_lrs_.size(),
              "OneCycle: " << max_lrs_.size() << " max_lrs for the optimizer's group " << group
                           << "; give one max_lr, or one per group");
  const double max_lr = max_lrs_.size() == 1 ? max_lrs_.front() : max_lrs_[group];
  const double initial = max_lr / div_factor_, final = initial / final_div_factor_;
  return phase.rising ? cosine_anneal(initial, max_lr, phase.pct) : cosine_anneal(max_lr, final, phase.pct);
}

std::optional<double> OneCycle::momentum_at(int64_t step) const {
  const Phase phase = phase_at(step);
  if (!cycle_momentum_) return std::nullopt;
  return phase.rising ? cosine_anneal(max_momentum_, base_momentum_, phase.pct)
                      : cosine_anneal(base_momentum_, max_momentum_, phase.pct);
}

std::unique_ptr<LrSchedule> make_schedule(const std::string& name, double base_lr, int64_t total_steps) {
  EMBER_CHECK(total_steps >= 1, "make_schedule: total_steps must be >= 1, got " << total_steps);
  if (name == "constant") return std::make_unique<ConstantLR>(base_lr);
  if (name == "step") return std::make_unique<StepLR>(base_lr, std::max<int64_t>(1, total_steps / 3), 0.1);
  if (name == "cosine") return std::make_unique<CosineWithWarmup>(base_lr, total_steps / 20, total_steps);
  if (name == "onecycle")
    return std::make_unique<OneCycle>(base_lr, total_steps, 0.3, 25.0, 1e4, /*cycle_momentum=*/false);
  EMBER_THROW("make_schedule: unknown schedule '" << name << "' (expected constant, step, cosine or onecycle)");
}

}  // namespace ember::optim
