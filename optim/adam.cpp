#include "optim/adam.h"

#include "core/error.h"
#include "kernels/factories.h"

namespace ember::optim {

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options) : Adam(std::move(params), options, false) {}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options, bool decoupled)
    : Optimizer(std::move(params), options.lr_),
      options_(options),
      decoupled_(decoupled),
      exp_avgs_(parameters().size()),
      exp_avg_sqs_(parameters().size()),
      steps_(parameters().size(), 0) {
  // NaN fails every comparison, so it is rejected too.
  EMBER_CHECK(options.beta1_ >= 0.0 && options.beta1_ < 1.0,
              name() << ": beta1 must be in [0, 1), got " << options.beta1_);
  EMBER_CHECK(options.beta2_ >= 0.0 && options.beta2_ < 1.0,
              name() << ": beta2 must be in [0, 1), got " << options.beta2_);
  EMBER_CHECK(options.eps_ >= 0.0, name() << ": eps must be >= 0, got " << options.eps_);
  EMBER_CHECK(options.weight_decay_ >= 0.0, name() << ": weight_decay must be >= 0, got " << options.weight_decay_);
}

void Adam::step_impl() {
  kernels::AdamOptions k;
  k.lr = lr();  // schedules change it through set_lr()
  k.beta1 = options_.beta1_;
  k.beta2 = options_.beta2_;
  k.eps = options_.eps_;
  k.weight_decay = options_.weight_decay_;
  k.decoupled = decoupled_;
  const std::vector<Tensor>& params = parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor grad = params[i].grad();
    if (!grad.defined()) continue;
    if (!exp_avgs_[i].defined()) {
      // Both moments start at 0 (the bias corrections assume it); the caller's scope makes them optimizer_state.
      exp_avgs_[i] = zeros_like(params[i]);
      exp_avg_sqs_[i] = zeros_like(params[i]);
    }
    kernels::adam_step_(params[i], grad, exp_avgs_[i], exp_avg_sqs_[i], k, steps_[i] + 1);
    ++steps_[i];  // only once the update happened (a rejected gradient leaves the count alone)
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
