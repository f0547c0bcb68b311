#include "autograd/record.h"

#include "autograd/accumulate_grad.h"
#include "autograd/anomaly_mode.h"
#include "autograd/grad_mode.h"

namespace ember::autograd {

bool any_requires_grad(std::initializer_list<Tensor> inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

std::shared_ptr<Node> gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return nullptr;
  if (t.grad_fn()) return t.grad_fn();
  return grad_accumulator(t);
}

void record(Tensor& output, const std::shared_ptr<Node>& node, std::initializer_list<Tensor> inputs) {
  record(output, node, std::vector<Tensor>(inputs));
}

void record(Tensor& output, const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs) {
  node->next.clear();
  for (const Tensor& t : inputs) node->next.push_back(gradient_edge(t));
  AutogradMeta& meta = output.impl()->autograd;
  meta.requires_grad = true;
  meta.grad_fn = node;
  if (AnomalyMode::is_enabled()) check_forward_output(output, *node);
}

}  // namespace ember::autograd
