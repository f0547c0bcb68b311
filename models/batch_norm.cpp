#include "models/batch_norm.h"

#include <sstream>

#include "autograd/ops.h"
#include "kernels/factories.h"
#include "memory/scopes.h"

namespace ember::nn {

BatchNorm2d::BatchNorm2d(const BatchNorm2dOptions& options) : options_(options) {
  EMBER_CHECK(options.num_features_ > 0, "BatchNorm2d: num_features must be positive, got " << options.num_features_);
  CategoryScope scope(MemoryCategory::parameter);
  const Shape channels{options.num_features_};
  if (options.affine_) {
    weight_ = register_parameter("weight", ones(channels));
    bias_ = register_parameter("bias", zeros(channels));
  }
  if (options.track_running_stats_) {
    running_mean_ = register_buffer("running_mean", zeros(channels));
    running_var_ = register_buffer("running_var", ones(channels));
  }
}

Tensor BatchNorm2d::run(const Tensor& x, bool relu, const Tensor& residual) {
  EMBER_CHECK(x.dim() == 4, "BatchNorm2d: expected input [N, C, H, W], got " << x.shape());
  // Without running statistics there is nothing else to normalise with, so eval uses the batch's.
  const bool batch_stats = is_training() || !options_.track_running_stats_;
  const double momentum = options_.momentum_, eps = options_.eps_;
  if (residual.defined())
    return batch_norm_add_relu(x, residual, weight_, bias_, running_mean_, running_var_, batch_stats, momentum, eps);
  const auto op = relu ? batch_norm_relu : batch_norm;
  return op(x, weight_, bias_, running_mean_, running_var_, batch_stats, momentum, eps);
}

Tensor BatchNorm2d::forward_impl(const Tensor& x) { return run(x, false, Tensor()); }

Tensor BatchNorm2d::forward_relu(const Tensor& x) {
  return forward_scope([&] { return run(x, true, Tensor()); });
}

Tensor BatchNorm2d::forward_add_relu(const Tensor& x, const Tensor& residual) {
  EMBER_CHECK(residual.defined(), "BatchNorm2d::forward_add_relu: the residual is undefined (input " << x.shape() << ")");
  return forward_scope([&] { return run(x, true, residual); });
}

std::string BatchNorm2d::extra_str() const {
  std::ostringstream os;
  os << options_.num_features_ << ", eps=" << options_.eps_ << ", momentum=" << options_.momentum_;
  if (!options_.affine_) os << ", affine=false";
  if (!options_.track_running_stats_) os << ", track_running_stats=false";
  return os.str();
}

}  // namespace ember::nn
