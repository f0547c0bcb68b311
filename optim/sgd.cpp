#include "optim/sgd.h"

#include "core/error.h"
#include "memory/empty.h"

namespace ember::optim {

SGD::SGD(std::vector<Tensor> params, const SgdOptions& options)
    : Optimizer(std::move(params), options.lr_), options_(options), momentum_buffers_(parameters().size()) {
  EMBER_CHECK(options.momentum_ >= 0.0, "SGD: momentum must be >= 0, got " << options.momentum_);
  EMBER_CHECK(options.weight_decay_ >= 0.0, "SGD: weight_decay must be >= 0, got " << options.weight_decay_);
  EMBER_CHECK(!options.nesterov_ || (options.momentum_ > 0.0 && options.dampening_ == 0.0),
              "SGD: nesterov needs momentum > 0 and dampening 0, got momentum " << options.momentum_
                                                                               << " and dampening "
                                                                               << options.dampening_);
}

void SGD::step_impl() {
  kernels::SgdOptions k;
  k.lr = lr();  // schedules change it through set_lr()
  k.momentum = options_.momentum_;
  k.dampening = options_.dampening_;
  k.weight_decay = options_.weight_decay_;
  k.nesterov = options_.nesterov_;
  const std::vector<Tensor>& params = parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor grad = params[i].grad();
    if (!grad.defined()) continue;
    Tensor& buffer = momentum_buffers_[i];
    const bool first_step = k.momentum != 0.0 && !buffer.defined();
    // No need to zero it: the first step writes the gradient into it.
    if (first_step) buffer = empty_like(params[i]);
    kernels::sgd_step_(params[i], grad, buffer, k, first_step);
  }
}

size_t SGD::state_bytes() const {
  size_t bytes = 0;
  for (const Tensor& b : momentum_buffers_)
    if (b.defined()) bytes += b.nbytes();
  return bytes;
}

}  // namespace ember::optim
