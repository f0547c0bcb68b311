#pragma once
// Recompute checkpointing: run part of a model without keeping its intermediate
// activations, and re-run it during backward to get them back (Chen et al. 2016;
// PyTorch's torch.utils.checkpoint).
//
//   Tensor h = ember::train::checkpoint([&](const Tensor& x) { return block->forward(x); }, x);
//   Tensor y = ember::train::checkpoint([&](const std::vector<Tensor>& in) { return add(in[0], in[1]); }, {a, b});
//
// Forward runs fn under NoGradGuard: its intermediates are freed as soon as fn is done
// with them; the checkpoint keeps its inputs and the generator state. Backward
// restores the generator state (dropout draws the same mask), re-runs fn with grad
// mode on inside a RecomputeScope (BatchNorm leaves its running statistics alone;
// Module::forward counts the recomputed activations in the backward phase), and
// back-propagates through the recomputed graph: parameters used inside fn get
// their .grad there, inputs get theirs through the checkpoint's node.
//
// As PyTorch's non-reentrant checkpoint: inputs that do not require grad are fine
// (parameters inside still get gradients), checkpoints nest, the output may be used
// more than once, and backward(retain_graph=true) may recompute again. Under grad
// mode the output always requires grad (fn's parameters are not known until it is
// re-run). fn must be a pure function of its inputs, the parameters and the
// generator, returning one tensor.
#include <functional>
#include <vector>

#include "core/tensor.h"

namespace ember::train {

using CheckpointFn = std::function<Tensor(const std::vector<Tensor>& inputs)>;

Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs);
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input);

}  // namespace ember::train
