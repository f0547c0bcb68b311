#include "optim/sgd.h"

#include "core/error.h"
#include "memory/empty.h"
#include "optim/state_dict.h"

namespace ember::optim {

SGD::SGD(std::vector<Tensor> params, const SgdOptions& options) : SGD(one_group(std::move(params)), options) {}

SGD::SGD(std::vector<ParamGroup> groups, const SgdOptions& options)
    : Optimizer(std::move(groups), options.values.lr, options.values.weight_decay, options.values.momentum),
      options_(options),
      momentum_buffers_(parameters().size()) {
  const kernels::SgdOptions& v = options.values;
  check_momentum(v.momentum);
  EMBER_CHECK(v.weight_decay >= 0.0, "SGD: weight_decay must be >= 0, got " << v.weight_decay);
}

void SGD::check_momentum(double momentum) const {
  const kernels::SgdOptions& v = options_.values;
  EMBER_CHECK(momentum >= 0.0, "SGD: momentum must be >= 0, got " << momentum);
  EMBER_CHECK(!v.nesterov || (momentum > 0.0 && v.dampening == 0.0),
              "SGD: nesterov needs momentum > 0 and dampening 0, got momentum " << momentum << " and dampening "
                                                                               << v.dampening);
}

void SGD::step_impl() {
  const std::vector<Tensor>& params = parameters();
  // Every missing buffer is made before any parameter moves, so an out-of-memory leaves the
  // parameters and the buffers as they were. No need to zero one: its first step writes the gradient into it.
  std::vector<Tensor> fresh(params.size());
  for (const Group& group : param_groups()) {
    if (group.momentum == 0.0) continue;
    for (size_t i = group.first; i < group.first + group.params.size(); ++i)
      if (params[i].grad().defined() && !momentum_buffers_[i].defined()) fresh[i] = empty_like(params[i]);
  }
  for (const Group& group : param_groups()) {
    kernels::SgdOptions k = options_.values;
    k.lr = group.lr;
    k.weight_decay = group.weight_decay;
    k.momentum = group.momentum;  // the options' unless a schedule (OneCycle) changed it
    for (size_t i = group.first; i < group.first + group.params.size(); ++i) {
      const Tensor grad = params[i].grad();
      if (!grad.defined()) continue;
      const bool first_step = fresh[i].defined();
      if (first_step) momentum_buffers_[i] = std::move(fresh[i]);
      kernels::sgd_step_(params[i], grad, momentum_buffers_[i], k, first_step);
    }
  }
}

void SGD::append_state(NamedTensors& state) const {
  for (size_t i = 0; i < momentum_buffers_.size(); ++i)
    if (momentum_buffers_[i].defined()) state.emplace_back("momentum_buffer." + std::to_string(i), momentum_buffers_[i]);
}

void SGD::load_state(StateDictReader& reader) {
  const std::vector<Tensor>& params = parameters();
  for (size_t i = 0; i < params.size(); ++i)
    momentum_buffers_[i] = reader.tensor("momentum_buffer." + std::to_string(i), params[i]);
}

size_t SGD::state_bytes() const {
  size_t bytes = 0;
  for (const Tensor& b : momentum_buffers_)
    if (b.defined()) bytes += b.nbytes();
  return bytes;
}

}  // namespace ember::optim
