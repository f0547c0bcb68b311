#pragma once
// Parameter groups: some of an optimizer's parameters with their own learning rate or
// weight decay (libtorch's OptimizerParamGroup, PyTorch's param_groups). A field left
// unset takes the value of the optimizer's options.
//
//   std::vector<ember::optim::ParamGroup> groups =
//       ember::optim::decay_groups(model->named_parameters(), 5e-4);   // {decay, no decay}
//   groups[1].lr = 0.01;                                               // a slower rate for them too
//   ember::optim::SGD sgd(groups, ember::optim::SgdOptions(0.1).momentum(0.9));
//   sgd.param_groups()[1].weight_decay;   // 0
//
// The optimizer numbers its parameters across the groups in order (group 0's first), and
// its state_dict keys the per-parameter state by that flat index.
//
// Under mixed precision (train::MixedPrecisionOptimizer, the Trainer's fp16) the optimizer
// factory is given the fp32 masters, in model->parameters() order (the order of
// named_parameters()): pair the names with the masters to make the groups there.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace ember::optim {

struct ParamGroup {
  std::vector<Tensor> params;
  std::optional<double> lr;            // unset: the optimizer's options
  std::optional<double> weight_decay;  // unset: the optimizer's options
};

// Two groups of `named` (e.g. nn::Module::named_parameters()): group 0, decayed by
// `weight_decay`, holds the weights of two or more dimensions; group 1, weight decay 0,
// holds biases (a name ending in "bias") and every 1-D parameter (BatchNorm's weight and
// bias). Both groups are always there, possibly empty, so their indices are fixed.
std::vector<ParamGroup> decay_groups(const std::vector<std::pair<std::string, Tensor>>& named, double weight_decay);

}  // namespace ember::optim
