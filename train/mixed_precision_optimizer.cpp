#include "train/mixed_precision_optimizer.h"

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "kernels/factories.h"
#include "kernels/ops.h"
#include "memory/scopes.h"
#include "memory/empty.h"
#include "optim/state_dict.h"

namespace ember::train {

namespace {

Tensor fp32_master_of(const Tensor& param) {
  CategoryScope scope(MemoryCategory::master_weights);
  Tensor master = empty(param.shape(), TensorOptions().dtype(DType::f32).device(param.device()));
  kernels::copy_(master, param.detach());
  return master.requires_grad_(true);
}

}  // namespace

MixedPrecisionOptimizer::MixedPrecisionOptimizer(std::vector<Tensor> params, const OptimizerFactory& make_inner,
                                                 const optim::GradScalerOptions& scaler)
    : params_(std::move(params)), scaler_(scaler) {
  EMBER_CHECK(!params_.empty(), "MixedPrecisionOptimizer: no parameters");
  const Device device = params_.front().device();
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    EMBER_CHECK(p.defined() && p.is_leaf() && is_floating(p.dtype()),
                "MixedPrecisionOptimizer: parameter " << i << " must be a floating leaf tensor, got " << p.str());
    EMBER_CHECK(p.device() == device, "MixedPrecisionOptimizer: parameter " << i << " is on " << p.device()
                                                                           << ", parameter 0 on " << device);
    masters_.push_back(fp32_master_of(p));
  }
  inner_ = make_checked_optimizer(make_inner, masters_, "MixedPrecisionOptimizer");
  CategoryScope scope(MemoryCategory::optimizer_state);
  found_inf_ = zeros({1}, TensorOptions().dtype(DType::f32).device(device));
}

void MixedPrecisionOptimizer::unscale_gradients() {
  NoGradGuard no_grad;
  const double inv_scale = 1.0 / scaler_.scale();
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor grad = params_[i].grad();
    if (!grad.defined()) continue;
    Tensor master_grad = masters_[i].grad();
    const bool accumulate = master_grad.defined();
    if (!accumulate) {
      CategoryScope scope(MemoryCategory::gradient);
      master_grad = empty(masters_[i].shape(), TensorOptions().dtype(DType::f32).device(grad.device()));
      masters_[i].set_grad(master_grad);
    }
    kernels::unscale_grad_(master_grad, grad, inv_scale, accumulate, found_inf_);
    params_[i].zero_grad();  // the fp16 gradient has been taken in: free it now
  }
}

bool MixedPrecisionOptimizer::found_inf() const { return found_inf_.item<float>() != 0.0f; }

bool MixedPrecisionOptimizer::step() {
  const bool skip = found_inf();
  if (!skip) {
    inner_->step();
    NoGradGuard no_grad;
    CategoryScope scope(MemoryCategory::parameter);
    for (size_t i = 0; i < params_.size(); ++i) kernels::copy_(params_[i], masters_[i].detach());
  }
  scaler_.update(skip);
  zero_grad();
  return !skip;
}

NamedTensors MixedPrecisionOptimizer::state_dict() const {
  NamedTensors state;
  for (size_t i = 0; i < masters_.size(); ++i) state.emplace_back("master." + std::to_string(i), masters_[i]);
  optim::append_part(state, "inner.", inner_->state_dict());
  optim::append_part(state, "scaler.", scaler_.state_dict());
  return state;
}

void MixedPrecisionOptimizer::load_state_dict(const TensorMap& state) {
  NoGradGuard no_grad;
  optim::StateDictReader reader(state, "MixedPrecisionOptimizer");
  std::vector<Tensor> masters;
  for (size_t i = 0; i < masters_.size(); ++i) {
    Tensor master = reader.tensor("master." + std::to_string(i), masters_[i]);
    EMBER_CHECK(master.defined(), "MixedPrecisionOptimizer state: no entry 'master." << i << "' (shape "
                                                                                    << masters_[i].shape() << ")");
    masters.push_back(std::move(master));
  }
  const TensorMap inner = reader.part("inner.");
  const TensorMap scaler = reader.part("scaler.");
  reader.finish();
  inner_->load_state_dict(inner);
  scaler_.load_state_dict(scaler);
  // In place: the inner optimizer holds these very tensors.
  for (size_t i = 0; i < masters_.size(); ++i) {
    kernels::copy_(masters_[i].detach(), masters[i]);
    kernels::copy_(params_[i].detach(), masters_[i].detach());
  }
}

void MixedPrecisionOptimizer::zero_grad() {
  inner_->zero_grad();
  for (const Tensor& p : params_) p.zero_grad();
  kernels::fill_(found_inf_, 0.0);
}

}  // namespace ember::train
