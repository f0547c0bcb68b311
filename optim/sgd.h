#pragma once
// Stochastic gradient descent with PyTorch's semantics (momentum, dampening,
// Nesterov, L2 weight decay), one fused kernel pass per parameter.
//
//   ember::optim::SGD sgd(model->parameters(),
//                         ember::optim::SgdOptions(0.1).momentum(0.9).weight_decay(5e-4));
//
// Each parameter group (optim/param_group.h) may set its own lr and weight_decay.
// Momentum buffers are allocated on the first step that sees a gradient
// (category optimizer_state); that step copies the gradient into the buffer.
// Move the model (Module::to) before its first step: buffers stay where they were made.
// Each group's momentum starts at the options' and may be changed (set_group_momentum, as
// OneCycle does); a group whose momentum is 0 keeps no buffers.
#include <vector>

#include "kernels/ops.h"
#include "optim/optimizer.h"

namespace ember::optim {

// A builder over the step kernel's own options: the values are what kernels::sgd_step_ reads
// (values.lr and values.weight_decay are the defaults of groups that set none; values.lr is
// the initial rate, a schedule changes the optimizer's).
struct SgdOptions {
  SgdOptions(double lr) { values.lr = lr; }  // NOLINT: implicit, as libtorch's: SGD(params, 0.1)
  SgdOptions& momentum(double m) { values.momentum = m; return *this; }
  SgdOptions& dampening(double d) { values.dampening = d; return *this; }
  SgdOptions& weight_decay(double wd) { values.weight_decay = wd; return *this; }
  SgdOptions& nesterov(bool n = true) { values.nesterov = n; return *this; }

  kernels::SgdOptions values;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SgdOptions& options);  // one group
  SGD(std::vector<ParamGroup> groups, const SgdOptions& options);

  const SgdOptions& options() const { return options_; }
  // The momentum buffer of parameter i (undefined before its first step or without momentum).
  const Tensor& momentum_buffer(size_t i) const { return momentum_buffers_.at(i); }
  size_t state_bytes() const override;

 protected:
  void step_impl() override;
  void append_state(NamedTensors& state) const override;
  void load_state(StateDictReader& reader) override;
  const char* rule_name() const override { return "SGD"; }
  void check_momentum(double momentum) const override;

 private:
  SgdOptions options_;
  std::vector<Tensor> momentum_buffers_;  // one per parameter, same shape, allocated lazily
};

}  // namespace ember::optim
