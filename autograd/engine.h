#pragma once
// The backward engine: walks the graph from a root in reverse topological order
// with an explicit stack (no recursion, so deep graphs are fine), sums the
// gradients arriving at each node, runs it with grad mode off, and frees its
// saved tensors right after unless retain_graph is set.
#include "core/tensor.h"

namespace ember::autograd {

void run_backward(const Tensor& root, const Tensor& grad_output, bool retain_graph);

}  // namespace ember::autograd
