#include "autograd/accumulate_grad.h"

#include "kernels/ops.h"
#include "memory/scopes.h"
#include "memory/memory.h"
#include "memory/empty.h"

namespace ember::autograd {

bool is_sole_owner(const Tensor& t) {
  return t.impl_ptr().use_count() == 1 && t.storage() && t.storage().use_count() == 1;
}

namespace {
// grad's bytes can become .grad without a copy.
bool can_adopt(const Tensor& grad, const Tensor& leaf) {
  return is_sole_owner(grad) && grad.dtype() == leaf.dtype() && grad.device() == leaf.device() &&
         grad.numel() == leaf.numel();
}
}  // namespace

void accumulate_into_leaf(const Tensor& leaf, const Tensor& grad) {
  CategoryScope scope(MemoryCategory::gradient);
  Tensor existing = leaf.grad();
  if (!existing.defined() && can_adopt(grad, leaf)) {
    relabel(grad, MemoryCategory::gradient);
    leaf.set_grad(grad.detach().reshape(leaf.shape()));
    return;
  }
  Tensor incoming = kernels::cast(grad, leaf.dtype());
  if (!existing.defined()) {
    Tensor copy = empty_like(leaf);
    kernels::copy_(copy, incoming.reshape(leaf.shape()).detach());
    leaf.set_grad(copy);
  } else {
    kernels::add_(existing, incoming.reshape(leaf.shape()).detach(), 1.0);
  }
}

std::vector<Tensor> AccumulateGrad::apply(const Tensor& grad_output) {
  if (auto impl = leaf_.lock()) {
    const Tensor leaf(impl);
    accumulate_into_leaf(leaf, grad_output);
    // The engine ran this node once, with every use's gradient summed: .grad is complete.
    if (const auto& hook = impl->autograd.post_accumulate_grad_hook) hook(leaf);
  }
  return {};
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  AutogradMeta& meta = leaf.impl()->autograd;
  if (auto existing = meta.grad_accumulator.lock()) return existing;
  auto node = std::make_shared<AccumulateGrad>(leaf);
  meta.grad_accumulator = node;
  return node;
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

}  // namespace ember::autograd
