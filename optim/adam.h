#pragma once
// Adam and AdamW with PyTorch's semantics, one fused kernel pass per parameter
// (kernels::adam_step_, formulas in kernels/functors.h adam_update).
//
//   ember::optim::Adam adam(model->parameters(), ember::optim::AdamOptions(1e-3).betas(0.9, 0.999));
//   ember::optim::AdamW adamw(model->parameters(), ember::optim::AdamOptions(1e-3).weight_decay(0.01));
//
// Adam adds weight_decay * p to the gradient (L2); AdamW shrinks p by 1 - lr * weight_decay
// before the update (decoupled). Unlike PyTorch's AdamW (default 0.01), weight_decay defaults
// to 0 for both: pass it explicitly. The moments exp_avg and exp_avg_sq (the parameter's
// shape and dtype, so fp32 for fp32 parameters) are allocated as optimizer_state on the first
// step that sees a gradient; each parameter counts its own steps, as in PyTorch.
#include <cstdint>
#include <vector>

#include "kernels/ops.h"
#include "optim/optimizer.h"

namespace ember::optim {

// A builder over the step kernel's own options (values.lr is the initial rate; Adam or
// AdamW sets values.decoupled).
struct AdamOptions {
  explicit AdamOptions(double lr = 1e-3) { values.lr = lr; }
  AdamOptions& betas(double beta1, double beta2) { values.beta1 = beta1; values.beta2 = beta2; return *this; }
  AdamOptions& eps(double e) { values.eps = e; return *this; }
  AdamOptions& weight_decay(double wd) { values.weight_decay = wd; return *this; }

  kernels::AdamOptions values;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options);

  const AdamOptions& options() const { return options_; }
  bool decoupled_weight_decay() const { return decoupled_; }
  // State of parameter i (undefined / 0 before its first step with a gradient).
  const Tensor& exp_avg(size_t i) const { return exp_avgs_.at(i); }
  const Tensor& exp_avg_sq(size_t i) const { return exp_avg_sqs_.at(i); }
  int64_t step_count(size_t i) const { return steps_.at(i); }
  size_t state_bytes() const override;

 protected:
  Adam(std::vector<Tensor> params, const AdamOptions& options, bool decoupled);
  void step_impl() override;
  void append_state(NamedTensors& state) const override;
  void load_state(StateDictReader& reader) override;
  const char* rule_name() const override { return name(); }

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
  AdamW(std::vector<Tensor> params, const AdamOptions& options) : Adam(std::move(params), options, true) {}
};

}  // namespace ember::optim
