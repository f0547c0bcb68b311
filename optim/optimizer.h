#pragma once
// Optimizer: the base of every parameter-update rule. It holds the parameters
// (a plain vector: one group, one learning rate), clears their gradients, and
// runs the update with the optimizer_state memory category and grad mode off.
//
//   ember::optim::SGD sgd(model->parameters(), ember::optim::SgdOptions(0.1).momentum(0.9));
//   sgd.zero_grad();
//   loss.backward();
//   sgd.step();            // public: sets the scopes; the rule lives in step_impl()
//
// Parameters without a gradient are skipped, as in PyTorch.
//
//   ember::NamedTensors state = sgd.state_dict();   // what a training checkpoint saves
//   sgd.load_state_dict(ember::TensorMap(state.begin(), state.end()));
#include <vector>

#include "core/named_tensors.h"
#include "core/tensor.h"

namespace ember::optim {

class StateDictReader;  // optim/state_dict.h

// Clears the gradients of `params` (nn::Module::zero_grad and Optimizer::zero_grad use it).
void zero_grad(const std::vector<Tensor>& params, bool set_to_none = true);

class Optimizer {
 public:
  Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient.
  void step();
  // set_to_none drops .grad (the next backward allocates it again); otherwise it is filled with 0.
  void zero_grad(bool set_to_none = true);

  const std::vector<Tensor>& parameters() const { return params_; }
  double lr() const { return lr_; }
  void set_lr(double lr);  // for learning-rate schedules
  // Bytes of optimizer state (momentum buffers, moments) currently allocated.
  virtual size_t state_bytes() const { return 0; }

  // The state an update carries to the next one, as named tensors: "lr" (f64 [1]) and the
  // rule's own entries, "<what>.<parameter index>" (SGD: momentum_buffer; Adam and AdamW:
  // exp_avg, exp_avg_sq, step). A parameter's entries are absent until its first update made
  // them, as in PyTorch. Loading restores them on the parameters' device and dtype, checking
  // each shape; a missing "lr" keeps the current one, an entry the rule does not know throws.
  NamedTensors state_dict() const;
  void load_state_dict(const TensorMap& state);

 protected:
  virtual void step_impl() = 0;
  virtual void append_state(NamedTensors& /*state*/) const {}
  virtual void load_state(StateDictReader& /*reader*/) {}
  virtual const char* rule_name() const = 0;

 private:
  std::vector<Tensor> params_;
  double lr_;
};

}  // namespace ember::optim
