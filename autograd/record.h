#pragma once
// Recording an op in the graph: the output gets the node as its grad_fn, and the node
// one edge per input — the input's grad_fn, or for a leaf that requires grad its
// accumulator (autograd/accumulate_grad.h), or nothing.
//
//   Tensor y = kernels::unary(UnaryOp::exp, x, 0);
//   if (ember::autograd::any_requires_grad({x})) {
//     auto node = std::make_shared<UnaryBackward>(...);
//     node->save(y);
//     ember::autograd::record(y, node, {x});
//   }
#include <initializer_list>
#include <memory>
#include <vector>

#include "autograd/node.h"
#include "core/tensor.h"

namespace ember::autograd {

// True when grad mode is on and any defined input requires grad.
bool any_requires_grad(std::initializer_list<Tensor> inputs);
// Makes `output` the result of `node` with `inputs` as its inputs (in apply()'s order).
void record(Tensor& output, const std::shared_ptr<Node>& node, std::initializer_list<Tensor> inputs);
void record(Tensor& output, const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs);
// The edge a gradient for `t` flows into: its grad_fn, its leaf accumulator, or null.
std::shared_ptr<Node> gradient_edge(const Tensor& t);

}  // namespace ember::autograd
