#pragma once
// Learning-rate schedules: pure functions of the step, applied to an optimizer
// before each update. `step` is the 0-based index of the update about to run.
//
//   auto schedule = ember::optim::make_schedule("cosine", 0.1, total_steps);
//   for (int64_t step = 0; step < total_steps; ++step) {
//     schedule->apply(sgd, step);   // sgd.set_lr(schedule->lr_at(step)) for one group
//     ... forward, backward, sgd.step();
//   }
//
// With parameter groups, apply() does what PyTorch's schedulers do: every group's rate
// is its initial rate times lr_at(step) / base_lr(), so the groups keep their ratios and
// a group that starts at the schedule's base rate follows lr_at(step) exactly. The whole
// curve scales, min_lr and OneCycle's max_lr included (PyTorch's CosineAnnealingLR keeps
// eta_min absolute, and OneCycleLR takes max_lr per group instead).
//
// OneCycle follows PyTorch's OneCycleLR (two phases, cosine annealing) exactly;
// CosineWithWarmup is the usual linear warm-up then half-cosine decay.
#include <cstdint>
#include <memory>
#include <string>

#include "optim/optimizer.h"

namespace ember::optim {

class LrSchedule {
 public:
  virtual ~LrSchedule() = default;
  virtual double lr_at(int64_t step) const = 0;
  // The rate the curve is drawn for (OneCycle: max_lr): a group starting at it follows lr_at.
  virtual double base_lr() const = 0;
  // Sets every group's rate for `step` (see above).
  void apply(Optimizer& optimizer, int64_t step) const;
};

class ConstantLR : public LrSchedule {
 public:
  explicit ConstantLR(double lr);
  double lr_at(int64_t step) const override;
  double base_lr() const override { return lr_; }

 private:
  double lr_;
};

// base_lr * gamma^(step / step_size): multiplied by gamma every step_size steps.
class StepLR : public LrSchedule {
 public:
  StepLR(double base_lr, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t step) const override;
  double base_lr() const override { return base_lr_; }

 private:
  double base_lr_;
  int64_t step_size_;
  double gamma_;
};

// Steps [0, warmup_steps): linear from warmup_start_factor * base_lr towards base_lr
// (reached at step warmup_steps); then half a cosine from base_lr down to min_lr, reached at
// total_steps and held after it.
class CosineWithWarmup : public LrSchedule {
 public:
  CosineWithWarmup(double base_lr, int64_t warmup_steps, int64_t total_steps, double min_lr = 0.0,
                   double warmup_start_factor = 0.0);
  double lr_at(int64_t step) const override;
  double base_lr() const override { return base_lr_; }

 private:
  double base_lr_;
  int64_t warmup_steps_;
  int64_t total_steps_;
  double min_lr_;
  double warmup_start_factor_;
};

// PyTorch's OneCycleLR: cosine from max_lr / div_factor up to max_lr at step
// pct_start * total_steps - 1, then cosine down to max_lr / (div_factor * final_div_factor)
// at step total_steps - 1 (held after it; PyTorch throws there instead).
class OneCycle : public LrSchedule {
 public:
  OneCycle(double max_lr, int64_t total_steps, double pct_start = 0.3, double div_factor = 25.0,
           double final_div_factor = 1e4);
  double lr_at(int64_t step) const override;
  double base_lr() const override { return max_lr_; }

 private:
  double max_lr_;
  double initial_lr_;
  double final_lr_;
  double peak_step_;  // pct_start * total_steps - 1, fractional as in PyTorch
  double last_step_;  // total_steps - 1
};

// For the CLI: "constant"; "step" (x0.1 every total_steps / 3 steps); "cosine" (5% warm-up,
// down to 0); "onecycle" (max_lr = base_lr, PyTorch's defaults). Throws on other names.
std::unique_ptr<LrSchedule> make_schedule(const std::string& name, double base_lr, int64_t total_steps);

}  // namespace ember::optim
