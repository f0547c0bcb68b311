#pragma once
// AccumulateGrad: the sink node of a leaf tensor. The first gradient is copied
// into .grad (gradient category); later ones are added in place, so a second
// backward accumulates, as in PyTorch. zero_grad() clears .grad.
#include <memory>
#include <vector>

#include "autograd/node.h"

namespace ember::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& leaf) : leaf_(leaf.impl_ptr()) {}
  const char* name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(const Tensor& grad_output) override;

 private:
  std::weak_ptr<TensorImpl> leaf_;
};

// The leaf's accumulator, created on first use and shared by all its uses.
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);
// True when nothing but the caller's own handle refers to t's bytes (no other handle, view or
// saved tensor): the engine may then write into them (PyTorch's "steal" rule).
bool is_sole_owner(const Tensor& t);
// Adds `grad` into leaf.grad (copying on first use).
void accumulate_into_leaf(const Tensor& leaf, const Tensor& grad);
// Clears the gradients of `params`: drops them (set_to_none), or fills them with zeros.
// nn::Module::zero_grad and optim::Optimizer::zero_grad both call it.
void zero_grad(const std::vector<Tensor>& params, bool set_to_none = true);

}  // namespace ember::autograd
