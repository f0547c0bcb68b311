#pragma once
// Adam and AdamW with PyTorch's semantics, one fused kernel pass per parameter
// (kernels::adam_step_, formulas in kernels/functors.h adam_update).
//
//   ember::optim::Adam adam(model->parameters(), ember::optim::AdamOptions(1e-3).betas(0.9, 0.999));
//   ember::optim::AdamW adamw(model->parameters(), ember::optim::AdamOptions(1e-3));   // weight_decay 0.01
//
// Adam adds weight_decay * p to the gradient (L2); AdamW shrinks p by 1 - lr * weight_decay
// before the update (decoupled). As in PyTorch, weight_decay defaults to 0 for Adam and to
// 0.01 for AdamW; a value set with weight_decay(), 0 included, is used as given by both.
// Parameter groups (optim/param_group.h) may set their own lr and weight_decay. The moments exp_avg and exp_avg_sq (the parameter's
// shape and dtype, so fp32 for fp32 parameters) are allocated as optimizer_state on the first
// step that sees a gradient; each parameter counts its own steps, as in PyTorch. Each group's
// beta1 starts at the options' and may be changed (set_group_momentum, as OneCycle does); the
// bias correction 1 - beta1^step uses the current one, as in PyTorch.
#include <cstdint>
#include <vector>

#include "kernels/ops.h"
#include "optim/optimizer.h"

namespace ember::optim {

constexpr double kAdamWDefaultWeightDecay = 0.01;  // PyTorch's AdamW default

// A builder over the step kernel's own options (values.lr is the initial rate; Adam or
// AdamW sets values.decoupled, and values.weight_decay to its default unless it was set).
struct AdamOptions {
  AdamOptions(double lr = 1e-3) { values.lr = lr; }  // NOLINT: implicit, as libtorch's: Adam(params, 1e-3)
  AdamOptions& betas(double beta1, double beta2) { values.beta1 = beta1; values.beta2 = beta2; return *this; }
  AdamOptions& eps(double e) { values.eps = e; return *this; }
  AdamOptions& weight_decay(double wd) {
    values.weight_decay = wd;
    weight_decay_set = true;
    return *this;
  }

  kernels::AdamOptions values;
  bool weight_decay_set = false;  // false: the rule's default (Adam 0, AdamW 0.01)
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options);  // one group
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options);

  // With the defaults resolved: values.weight_decay is the one groups without their own use.
  const AdamOptions& options() const { return options_; }
  bool decoupled_weight_decay() const { return decoupled_; }
  // State of parameter i (undefined / 0 before its first step with a gradient).
  const Tensor& exp_avg(size_t i) const { return exp_avgs_.at(i); }
  const Tensor& exp_avg_sq(size_t i) const { return exp_avg_sqs_.at(i); }
  int64_t step_count(size_t i) const { return steps_.at(i); }
  size_t state_bytes() const override;

 protected:
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options, bool decoupled);
  void step_impl() override;
  void append_state(NamedTensors& state) const override;
  void load_state(StateDictReader& reader) override;
  const char* rule_name() const override { return name(); }
  void check_momentum(double beta1) const override;

 private:
  const char* name() const { return decoupled_ ? "AdamW" : "Adam"; }

  AdamOptions options_;
  bool decoupled_;
  std::vector<Tensor> exp_avgs_;     // per parameter, its shape: first moment
  std::vector<Tensor> exp_avg_sqs_;  // per parameter, its shape: second moment
  std::vector<int64_t> steps_;       // per parameter: updates done so far
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamOptions& options) : Adam(one_group(std::move(params)), options, true) {}
  AdamW(std::vector<ParamGroup> groups, const AdamOptions& options) : Adam(std::move(groups), options, true) {}
};

}  // namespace ember::optim
