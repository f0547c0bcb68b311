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
#include <vector>

#include "core/tensor.h"

namespace ember::optim {

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

 protected:
  virtual void step_impl() = 0;

 private:
  std::vector<Tensor> params_;
  double lr_;
};

}  // namespace ember::optim
