#include "optim/adam.h"

#include "core/error.h"
#include "kernels/factories.h"
#include "optim/state_dict.h"

namespace ember::optim {

namespace {

AdamOptions with_default_weight_decay(AdamOptions options, bool decoupled) {
  if (!options.weight_decay_set) options.weight_decay(decoupled ? kAdamWDefaultWeightDecay : 0.0);
  return options;
}

}  // namespace

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options) : Adam(one_group(std::move(params)), options, false) {}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& options) : Adam(std::move(groups), options, false) {}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& options, bool decoupled)
    : Optimizer(std::move(groups), options.values.lr, with_default_weight_decay(options, decoupled).values.weight_decay,
                options.values.beta1),
      options_(with_default_weight_decay(options, decoupled)),
      decoupled_(decoupled),
      exp_avgs_(parameters().size()),
      exp_avg_sqs_(parameters().size()),
      steps_(parameters().size(), 0) {
  // NaN fails every comparison, so it is rejected too.
  const kernels::AdamOptions& v = options_.values;
  check_momentum(v.beta1);
  EMBER_CHECK(v.beta2 >= 0.0 && v.beta2 < 1.0, name() << ": beta2 must be in [0, 1), got " << v.beta2);
  EMBER_CHECK(v.eps >= 0.0, name() << ": eps must be >= 0, got " << v.eps);
  EMBER_CHECK(v.weight_decay >= 0.0, name() << ": weight_decay must be >= 0, got " << v.weight_decay);
}

void Adam::check_momentum(double beta1) const {
  EMBER_CHECK(beta1 >= 0.0 && beta1 < 1.0, name() << ": beta1 must be in [0, 1), got " << beta1);
}

void Adam::step_impl() {
  const std::vector<Tensor>& params = parameters();
  // Both moments of every parameter that has none yet are made before any parameter moves, so an
  // out-of-memory leaves the parameters and the moments as they were. They start at 0 (the bias
  // corrections assume it); the caller's scope makes them optimizer_state.
  std::vector<Tensor> fresh_avgs(params.size()), fresh_avg_sqs(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].grad().defined() || exp_avgs_[i].defined()) continue;
    fresh_avgs[i] = zeros_like(params[i]);
    fresh_avg_sqs[i] = zeros_like(params[i]);
  }
  for (const Group& group : param_groups()) {
    kernels::AdamOptions k = options_.values;
    k.lr = group.lr;
    k.weight_decay = group.weight_decay;
    k.decoupled = decoupled_;
    k.beta1 = group.momentum;  // the options' unless a schedule (OneCycle) changed it
    for (size_t i = group.first; i < group.first + group.params.size(); ++i) {
      const Tensor grad = params[i].grad();
      if (!grad.defined()) continue;
      if (fresh_avgs[i].defined()) {
        exp_avgs_[i] = std::move(fresh_avgs[i]);
        exp_avg_sqs_[i] = std::move(fresh_avg_sqs[i]);
      }
      kernels::adam_step_(params[i], grad, exp_avgs_[i], exp_avg_sqs_[i], k, steps_[i] + 1);
      ++steps_[i];  // only once the update happened (a rejected gradient leaves the count alone)
    }
  }
}

void Adam::append_state(NamedTensors& state) const {
  for (size_t i = 0; i < exp_avgs_.size(); ++i) {
    if (!exp_avgs_[i].defined()) continue;
    const std::string index = std::to_string(i);
    state.emplace_back("exp_avg." + index, exp_avgs_[i]);
    state.emplace_back("exp_avg_sq." + index, exp_avg_sqs_[i]);
    state.emplace_back("step." + index, state_count(steps_[i]));
  }
}

void Adam::load_state(StateDictReader& reader) {
  const std::vector<Tensor>& params = parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string index = std::to_string(i);
    exp_avgs_[i] = reader.tensor("exp_avg." + index, params[i]);
    exp_avg_sqs_[i] = reader.tensor("exp_avg_sq." + index, params[i]);
    steps_[i] = reader.count("step." + index, 0);
    EMBER_CHECK(exp_avgs_[i].defined() == exp_avg_sqs_[i].defined(),
                name() << " state: parameter " << i << " has only one of exp_avg and exp_avg_sq");
  }
}

size_t Adam::state_bytes() const {
  size_t bytes = 0;
  for (size_t i = 0; i < exp_avgs_.size(); ++i) {
    if (exp_avgs_[i].defined()) bytes += exp_avgs_[i].nbytes();
    if (exp_avg_sqs_[i].defined()) bytes += exp_avg_sqs_[i].nbytes();
  }
  return bytes;
}

}  // namespace ember::optim
