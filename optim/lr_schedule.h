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
// With parameter groups, apply() gives each group the rate its PyTorch namesake gives it
// (group_lr): StepLR scales each group's initial rate; CosineWithWarmup's warm-up scales it
// too (LinearLR), and its decay runs from the group's initial rate down to one absolute
// min_lr for every group (CosineAnnealingLR's eta_min); OneCycle draws each group's curve
// from its max_lr — one for all groups, or one per group — whatever the group started at
// (OneCycleLR). lr_at(step) is the rate of a group that starts at base_lr().
//
// OneCycle follows PyTorch's OneCycleLR (two phases, cosine annealing) exactly, including
// cycle_momentum (on by default, as in PyTorch): apply() also sets every group's momentum term
// (SGD's momentum, Adam's and AdamW's beta1) from max_momentum down to base_momentum while the
// rate rises, and back up while it falls. CosineWithWarmup is the usual linear warm-up then
// half-cosine decay.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace ember::optim {

class LrSchedule {
 public:
  virtual ~LrSchedule() = default;
  // The rate at `step` of parameter group `group`, which started at `initial_lr`.
  virtual double group_lr(int64_t step, size_t group, double initial_lr) const = 0;
  // The rate the curve is drawn for (OneCycle: group 0's max_lr).
  virtual double base_lr() const = 0;
  // The momentum term at `step` (SGD's momentum, Adam's beta1) when the schedule sets it
  // (OneCycle with cycle_momentum); none otherwise, and the optimizer's stays as it is.
  virtual std::optional<double> momentum_at(int64_t /*step*/) const { return std::nullopt; }
  // The rate of a group that starts at base_lr().
  double lr_at(int64_t step) const { return group_lr(step, 0, base_lr()); }
  // Sets every group's rate for `step` (see above), and its momentum term where the schedule
  // has one (throws, naming the rule, for an optimizer without a momentum term).
  void apply(Optimizer& optimizer, int64_t step) const;
};

class ConstantLR : public LrSchedule {
 public:
  explicit ConstantLR(double lr);
  double group_lr(int64_t step, size_t group, double initial_lr) const override;  // initial_lr: no change
  double base_lr() const override { return lr_; }

 private:
  double lr_;
};

// base_lr * gamma^(step / step_size): multiplied by gamma every step_size steps.
class StepLR : public LrSchedule {
 public:
  StepLR(double base_lr, int64_t step_size, double gamma = 0.1);
  double group_lr(int64_t step, size_t group, double initial_lr) const override;
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
  double group_lr(int64_t step, size_t group, double initial_lr) const override;
  double base_lr() const override { return base_lr_; }

 private:
  double base_lr_;
  int64_t warmup_steps_;
  int64_t total_steps_;
  double min_lr_;
  double warmup_start_factor_;
};

// PyTorch's OneCycleLR (anneal_strategy "cos", three_phase false): cosine from
// max_lr / div_factor up to max_lr at step pct_start * total_steps - 1, then cosine down to
// max_lr / (div_factor * final_div_factor) at step total_steps - 1 (held after it; PyTorch
// throws there instead). One max_lr for every group, or one per group (max_lrs[g]); a group's
// initial rate is not used, as in PyTorch. With cycle_momentum (PyTorch's default) the momentum
// term runs the other way on the same steps: cosine from max_momentum down to base_momentum at
// the peak, then back up to max_momentum at the end, the same for every group:
//
//   optim::OneCycle one(0.1, 1000);                   // lr 0.004 -> 0.1 -> 4e-7, momentum 0.95 -> 0.85 -> 0.95
//   optim::OneCycle lr_only(0.1, 1000, 0.3, 25.0, 1e4, /*cycle_momentum=*/false);
class OneCycle : public LrSchedule {
 public:
  OneCycle(double max_lr, int64_t total_steps, double pct_start = 0.3, double div_factor = 25.0,
           double final_div_factor = 1e4, bool cycle_momentum = true, double base_momentum = 0.85,
           double max_momentum = 0.95);
  OneCycle(std::vector<double> max_lrs, int64_t total_steps, double pct_start = 0.3, double div_factor = 25.0,
           double final_div_factor = 1e4, bool cycle_momentum = true, double base_momentum = 0.85,
           double max_momentum = 0.95);
  double group_lr(int64_t step, size_t group, double initial_lr) const override;
  double base_lr() const override { return max_lrs_.front(); }
  std::optional<double> momentum_at(int64_t step) const override;

 private:
  // Which phase `step` is in (rising: the rate climbs to its peak, the momentum falls) and
  // the fraction of that phase done.
  struct Phase {
    bool rising;
    double pct;
  };
  Phase phase_at(int64_t step) const;

  std::vector<double> max_lrs_;  // one, or one per group
  double div_factor_, final_div_factor_;
  bool cycle_momentum_;
  double base_momentum_, max_momentum_;
  double peak_step_;  // pct_start * total_steps - 1, fractional as in PyTorch
  double last_step_;  // total_steps - 1
};

// For the CLI: "constant"; "step" (x0.1 every total_steps / 3 steps); "cosine" (5% warm-up,
// down to 0); "onecycle" (max_lr = base_lr, PyTorch's defaults but for cycle_momentum, which is
// off: the recipes' momentum stays as they set it, so the CLI's runs are the ones
// docs/results.md measured). Throws on other names.
std::unique_ptr<LrSchedule> make_schedule(const std::string& name, double base_lr, int64_t total_steps);

}  // namespace ember::optim
