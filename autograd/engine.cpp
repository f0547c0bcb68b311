#include "autograd/engine.h"

#include <unordered_map>
#include <vector>

#include "autograd/accumulate_grad.h"
#include "autograd/anomaly_mode.h"
#include "core/error.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "kernels/factories.h"
#include "kernels/ops.h"
#include "memory/allocation_observer.h"
#include "memory/scopes.h"

namespace ember::autograd {

namespace {

// Whether a node's pending gradient sum may take the next term in place (the same sum, slot +
// grad, without a new tensor): the engine holds its only handle (no node handed it to another
// input as well, nothing saved it, it is not the caller's gradient) and no broadcast or type
// promotion is needed. (Gradients are computed without grad mode, so none is part of a graph.)
bool can_add_into(const Tensor& slot, const Tensor& grad) {
  return is_sole_owner(slot) && slot.shape() == grad.shape() && slot.dtype() == grad.dtype() &&
         slot.device() == grad.device();
}

// Number of graph edges pointing at each node reachable from root.
std::unordered_map<Node*, int> count_dependencies(Node* root) {
  std::unordered_map<Node*, int> dependencies;
  std::vector<Node*> stack{root};
  std::unordered_map<Node*, bool> seen{{root, true}};
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const auto& next : node->next) {
      if (!next) continue;
      ++dependencies[next.get()];
      if (!seen[next.get()]) {
        seen[next.get()] = true;
        stack.push_back(next.get());
      }
    }
  }
  return dependencies;
}

}  // namespace

void run_backward(const Tensor& root, const Tensor& grad_output, bool retain_graph) {
  EMBER_CHECK(root.defined(), "backward: called on an undefined tensor");
  EMBER_CHECK(root.requires_grad(), "backward: the tensor " << root.shape()
                                                            << " does not require grad and has no grad_fn");
  Tensor seed = grad_output;
  if (!seed.defined()) {
    EMBER_CHECK(root.numel() == 1, "backward: a gradient can be created implicitly only for one-element "
                                   "outputs, got " << root.shape() << "; pass backward(gradient)");
    seed = ones_like(root.detach());
  }
  EMBER_CHECK(seed.shape() == root.shape(), "backward: gradient shape " << seed.shape() << " does not match output "
                                                                        << root.shape());
  NoGradGuard no_grad;
  CategoryScope category(MemoryCategory::temporary);
  PhaseScope phase(Phase::backward);

  if (root.is_leaf()) {
    accumulate_into_leaf(root, seed);
    return;
  }

  Node* root_node = root.grad_fn().get();
  std::unordered_map<Node*, int> dependencies = count_dependencies(root_node);
  std::unordered_map<Node*, Tensor> pending{{root_node, seed}};
  // Keep every node alive while the walk runs, even if outputs die meanwhile.
  std::vector<std::shared_ptr<Node>> ready{root.grad_fn()};

  while (!ready.empty()) {
    std::shared_ptr<Node> node = std::move(ready.back());
    ready.pop_back();
    Tensor grad = std::move(pending[node.get()]);
    pending.erase(node.get());
    // A node no gradient reached (all its outputs' grads were undefined) passes none on.
    std::vector<Tensor> input_grads;
    if (grad.defined()) input_grads = node->apply(grad);
    if (AnomalyMode::is_enabled()) check_backward_gradients(input_grads, *node);
    grad = Tensor();
    if (!retain_graph) node->release_saved();

    for (size_t i = 0; i < node->next.size(); ++i) {
      const std::shared_ptr<Node>& next = node->next[i];
      if (!next) continue;
      if (i < input_grads.size() && input_grads[i].defined()) {
        Tensor& slot = pending[next.get()];
        if (!slot.defined()) slot = input_grads[i];
        else if (can_add_into(slot, input_grads[i])) kernels::add_(slot, input_grads[i], 1.0);
        else slot = kernels::binary(kernels::BinaryOp::add, slot, input_grads[i]);
      }
      if (--dependencies[next.get()] == 0) ready.push_back(next);
    }
  }
}

}  // namespace ember::autograd
