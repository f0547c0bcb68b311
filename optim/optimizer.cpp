#include "optim/optimizer.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "memory/scopes.h"
#include "memory/allocation_observer.h"
#include "optim/state_dict.h"

namespace ember::optim {

Optimizer::Optimizer(std::vector<Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {
  for (size_t i = 0; i < params_.size(); ++i) {
    EMBER_CHECK(params_[i].defined(), "optimizer: parameter " << i << " is undefined");
    EMBER_CHECK(params_[i].is_leaf(), "optimizer: parameter " << i << " " << params_[i].shape()
                                                              << " is not a leaf tensor (it has a grad_fn)");
  }
  set_lr(lr);
}

void Optimizer::set_lr(double lr) {
  EMBER_CHECK(std::isfinite(lr) && lr >= 0.0, "optimizer: learning rate must be finite and >= 0, got " << lr);
  lr_ = lr;
}

void Optimizer::step() {
  // Updates are not part of any graph, and their state is optimizer memory.
  NoGradGuard no_grad;
  CategoryScope scope(MemoryCategory::optimizer_state);
  PhaseScope phase(Phase::optimizer);
  step_impl();
}

NamedTensors Optimizer::state_dict() const {
  NamedTensors state{{"lr", state_scalar(lr_)}};
  append_state(state);
  return state;
}

void Optimizer::load_state_dict(const TensorMap& state) {
  NoGradGuard no_grad;
  CategoryScope scope(MemoryCategory::optimizer_state);
  StateDictReader reader(state, rule_name());
  const double lr = reader.scalar("lr", lr_);
  load_state(reader);
  reader.finish();
  set_lr(lr);
}

void zero_grad(const std::vector<Tensor>& params, bool set_to_none) {
  for (const Tensor& p : params) {
    if (set_to_none) {
      p.zero_grad();
    } else if (Tensor g = p.grad(); g.defined()) {
      g.zero_();
    }
  }
}

void Optimizer::zero_grad(bool set_to_none) { optim::zero_grad(params_, set_to_none); }

}  // namespace ember::optim
