#include "optim/optimizer.h"

#include <cmath>
#include <string>

#include "autograd/accumulate_grad.h"
#include "autograd/grad_mode.h"
#include "core/error.h"
#include "memory/scopes.h"
#include "memory/allocation_observer.h"
#include "optim/state_dict.h"

namespace ember::optim {

namespace {

void check_lr(double lr, const std::string& what) {
  EMBER_CHECK(std::isfinite(lr) && lr >= 0.0, "optimizer: " << what << " must be finite and >= 0, got " << lr);
}

}  // namespace

std::vector<ParamGroup> one_group(std::vector<Tensor> params) {
  std::vector<ParamGroup> groups(1);
  groups[0].params = std::move(params);
  return groups;
}

Optimizer::Optimizer(std::vector<ParamGroup> groups, double lr, double weight_decay, std::optional<double> momentum)
    : has_momentum_(momentum.has_value()) {
  EMBER_CHECK(!groups.empty(), "optimizer: no parameter groups");
  for (size_t g = 0; g < groups.size(); ++g) {
    Group group;
    group.first = params_.size();
    group.lr = group.initial_lr = groups[g].lr.value_or(lr);
    group.weight_decay = groups[g].weight_decay.value_or(weight_decay);
    group.momentum = momentum.value_or(0.0);
    check_lr(group.lr, "group " + std::to_string(g) + "'s learning rate");
    // The rule checks its options' weight_decay, naming itself; a group's own is checked here.
    EMBER_CHECK(!groups[g].weight_decay || group.weight_decay >= 0.0,
                "optimizer: group " << g << "'s weight_decay must be >= 0, got " << group.weight_decay);
    for (Tensor& p : groups[g].params) {
      const size_t i = params_.size();
      EMBER_CHECK(p.defined(), "optimizer: parameter " << i << " (group " << g << ") is undefined");
      EMBER_CHECK(p.is_leaf(), "optimizer: parameter " << i << " " << p.shape()
                                                       << " is not a leaf tensor (it has a grad_fn)");
      for (size_t j = 0; j < i; ++j)
        EMBER_CHECK(!params_[j].is_same(p), "optimizer: parameter " << i << " (group " << g
                                                                    << ") is parameter " << j << " again");
      params_.push_back(p);
    }
    group.params = std::move(groups[g].params);
    groups_.push_back(std::move(group));
  }
}

void Optimizer::set_lr(double lr) {
  check_lr(lr, "learning rate");
  for (Group& group : groups_) group.lr = lr;
}

void Optimizer::check_group(size_t group) const {
  EMBER_CHECK(group < groups_.size(), "optimizer: group " << group << " does not exist (" << groups_.size()
                                                          << " groups)");
}

void Optimizer::set_group_lr(size_t group, double lr) {
  check_group(group);
  check_lr(lr, "learning rate");
  groups_[group].lr = lr;
}

void Optimizer::set_group_momentum(size_t group, double momentum) {
  check_group(group);
  EMBER_CHECK(has_momentum_, rule_name() << ": this rule has no momentum term (SGD's momentum, Adam's beta1) to set");
  check_momentum(momentum);
  groups_[group].momentum = momentum;
}

std::string Optimizer::lr_entry(size_t group) const {
  return groups_.size() == 1 ? "lr" : "group." + std::to_string(group) + ".lr";
}

void Optimizer::step() {
  // Updates are not part of any graph, and their state is optimizer memory.
  NoGradGuard no_grad;
  CategoryScope scope(MemoryCategory::optimizer_state);
  PhaseScope phase(Phase::optimizer);
  step_impl();
}

NamedTensors Optimizer::state_dict() const {
  NamedTensors state;
  for (size_t g = 0; g < groups_.size(); ++g) state.emplace_back(lr_entry(g), state_scalar(groups_[g].lr));
  append_state(state);
  return state;
}

void Optimizer::load_state_dict(const TensorMap& state) {
  NoGradGuard no_grad;
  CategoryScope scope(MemoryCategory::optimizer_state);
  StateDictReader reader(state, rule_name());
  std::vector<double> lrs;
  for (size_t g = 0; g < groups_.size(); ++g) {
    lrs.push_back(reader.scalar(lr_entry(g), groups_[g].lr));
    check_lr(lrs.back(), "saved learning rate '" + lr_entry(g) + "'");
  }
  load_state(reader);
  reader.finish();
  for (size_t g = 0; g < groups_.size(); ++g) groups_[g].lr = lrs[g];
}

void Optimizer::zero_grad(bool set_to_none) { autograd::zero_grad(params_, set_to_none); }

}  // namespace ember::optim
