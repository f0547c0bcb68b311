#pragma once
// Optimizer: the base of every parameter-update rule. It holds the parameters in
// groups, each with its learning rate and weight decay (optim/param_group.h; a plain
// vector is one group), clears their gradients, and runs the update with the
// optimizer_state memory category and grad mode off.
//
//   ember::optim::SGD sgd(model->parameters(), ember::optim::SgdOptions(0.1).momentum(0.9));
//   sgd.zero_grad();
//   loss.backward();
//   sgd.step();            // public: sets the scopes; the rule lives in step_impl()
//
// Parameters without a gradient are skipped, as in PyTorch.
//
//   ember::optim::SGD sgd(ember::optim::decay_groups(model->named_parameters(), 5e-4),
//                         ember::optim::SgdOptions(0.1));   // no decay on biases and BatchNorm
//   sgd.set_lr(0.01);                 // every group's
//   sgd.set_group_lr(1, 0.001);       // one group's
//
//   ember::NamedTensors state = sgd.state_dict();   // what a training checkpoint saves
//   sgd.load_state_dict(ember::TensorMap(state.begin(), state.end()));
#include <optional>
#include <string>
#include <vector>

#include "core/named_tensors.h"
#include "core/tensor.h"
#include "optim/param_group.h"

namespace ember::optim {

class StateDictReader;  // optim/state_dict.h


class Optimizer {
 public:
  // A group as the optimizer holds it, every value resolved.
  struct Group {
    std::vector<Tensor> params;
    size_t first = 0;         // flat index of params[0] in parameters()
    double lr = 0.0;          // the current rate (set_lr, schedules)
    double initial_lr = 0.0;  // the rate at construction: what a schedule scales
    double weight_decay = 0.0;
    // The rule's momentum term, which OneCycle cycles (PyTorch's param_groups "momentum" or
    // betas[0]): SGD's momentum, Adam's and AdamW's beta1; the options' value at construction.
    // 0 for a rule without one (has_momentum() false).
    double momentum = 0.0;
  };

  // `lr` and `weight_decay` are the options' values, taken by groups that leave theirs unset;
  // `momentum`, when given, is every group's momentum term (SGD's momentum, Adam's beta1).
  Optimizer(std::vector<ParamGroup> groups, double lr, double weight_decay,
            std::optional<double> momentum = std::nullopt);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient.
  void step();
  // set_to_none drops .grad (the next backward allocates it again); otherwise it is filled with 0.
  void zero_grad(bool set_to_none = true);

  // Every group's parameters, in group order (the flat index of the state_dict).
  const std::vector<Tensor>& parameters() const { return params_; }
  const std::vector<Group>& param_groups() const { return groups_; }
  double lr() const { return groups_.at(0).lr; }  // group 0's (the only one, usually)
  void set_lr(double lr);                          // every group's
  void set_group_lr(size_t group, double lr);
  // Whether the rule has a momentum term (SGD, Adam, AdamW) that set_group_momentum sets, as
  // OneCycle's cycle_momentum does before every step. Like the learning rate it is the
  // group's, and unlike it, it is not in state_dict(): a schedule sets it again on resume.
  bool has_momentum() const { return has_momentum_; }
  void set_group_momentum(size_t group, double momentum);
  // Bytes of optimizer state (momentum buffers, moments) currently allocated.
  virtual size_t state_bytes() const { return 0; }

  // The state an update carries to the next one, as named tensors: the learning rate (f64 [1]:
  // "lr" with one group, "group.<g>.lr" for each group g with several) and the rule's own
  // entries, "<what>.<parameter index>" with the flat index of parameters() (SGD:
  // momentum_buffer; Adam and AdamW: exp_avg, exp_avg_sq, step). A parameter's entries are
  // absent until its first update made them, as in PyTorch. Loading restores them on the
  // parameters' device and dtype, checking each shape; a missing rate keeps the current one,
  // an entry the rule does not know throws (so does the rate entry of a state saved with more
  // groups, or with one group loaded into several, or the reverse).
  NamedTensors state_dict() const;
  void load_state_dict(const TensorMap& state);

 protected:
  virtual void step_impl() = 0;
  virtual void append_state(NamedTensors& /*state*/) const {}
  virtual void load_state(StateDictReader& /*reader*/) {}
  virtual const char* rule_name() const = 0;
  // Throws naming the rule when `momentum` is not a valid momentum term for it.
  virtual void check_momentum(double /*momentum*/) const {}

 private:
  void check_group(size_t group) const;
  std::string lr_entry(size_t group) const;  // "lr" or "group.<g>.lr"

  std::vector<Group> groups_;
  std::vector<Tensor> params_;  // every group's, concatenated
  bool has_momentum_ = false;
};

// One group of `params`, as the single-vector constructors of the rules make.
std::vector<ParamGroup> one_group(std::vector<Tensor> params);

}  // namespace ember::optim
