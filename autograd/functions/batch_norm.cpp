// batch_norm and its gradients (fused formula, kernels/batch_norm_math.h).
// Training normalises with the batch statistics and updates the running ones
// in place, except while checkpointing recomputes the segment (the first
// forward already counted this batch). Eval normalises with the running
// statistics, which are then constants for backward. The node saves x and the
// per-channel mean and invstd (a few floats per channel), never xhat. batch_norm_relu is
// the same node with a ReLU fused after it: the kernels clamp as they write y, and backward
// recomputes where y was positive from x (kernels/batch_norm_math.h).
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "autograd/recompute_state.h"
#include "core/error.h"
#include "kernels/ops.h"

namespace ember {

namespace {

class BatchNormBackward final : public autograd::Node {
 public:
  BatchNormBackward(bool batch_stats, bool relu, bool need_x, bool need_weight, bool need_bias)
      : batch_stats_(batch_stats), relu_(relu), need_x_(need_x), need_weight_(need_weight), need_bias_(need_bias) {}
  const char* name() const override { return relu_ ? "batch_norm_relu" : "batch_norm"; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    Tensor dx, dweight, dbias;
    kernels::batch_norm_backward(saved(0), dy, saved(1), saved(2), saved(3), batch_stats_, need_x_ ? &dx : nullptr,
                                 need_weight_ ? &dweight : nullptr, need_bias_ ? &dbias : nullptr, saved(4), relu_);
    return {dx, dweight, dbias};
  }

 private:
  bool batch_stats_, relu_, need_x_, need_weight_, need_bias_;
};

// invstd = 1 / sqrt(running_var + eps), in the statistics dtype.
Tensor running_invstd(const Tensor& running_var, DType stats, double eps) {
  using kernels::BinaryOp;
  const Tensor var = kernels::cast(running_var, stats);
  const Tensor std = kernels::unary(kernels::UnaryOp::sqrt, kernels::binary_scalar(BinaryOp::add, var, eps, false), 0);
  return kernels::binary_scalar(BinaryOp::div, std, 1.0, /*scalar_first=*/true);
}

// The end of a residual block, relu(batch_norm(x) + residual): one apply pass forward. Backward
// masks dy with the saved output (the next layer keeps it anyway), which is also the residual's
// gradient, then runs batch norm's backward on it: the same passes as the three ops'.
class BatchNormAddReluBackward final : public autograd::Node {
 public:
  BatchNormAddReluBackward(bool batch_stats, bool need_x, bool need_residual, bool need_weight, bool need_bias)
      : batch_stats_(batch_stats), need_x_(need_x), need_residual_(need_residual), need_weight_(need_weight),
        need_bias_(need_bias) {}
  const char* name() const override { return "batch_norm_add_relu"; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    const Tensor& y = saved(4);
    const Tensor g = kernels::unary_backward(kernels::UnaryOp::relu, y, y, dy, 0.0);
    Tensor dx, dweight, dbias;
    if (need_x_ || need_weight_ || need_bias_)
      kernels::batch_norm_backward(saved(0), g, saved(1), saved(2), saved(3), batch_stats_, need_x_ ? &dx : nullptr,
                                   need_weight_ ? &dweight : nullptr, need_bias_ ? &dbias : nullptr);
    return {dx, need_residual_ ? g : Tensor(), dweight, dbias};
  }

 private:
  bool batch_stats_, need_x_, need_residual_, need_weight_, need_bias_;
};

// What both nodes' backward reads first: saved(0..3).
void save_for_backward(autograd::Node& node, const Tensor& x, const Tensor& mean, const Tensor& invstd,
                       const Tensor& weight) {
  node.save(x);
  node.save(mean);
  node.save(invstd);
  node.save(weight);
}

// x's batch statistics (training: running ones updated, except while a checkpointed segment is
// recomputed) or its running ones (eval), as batch norm normalises with them.
void statistics(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, bool training,
                double momentum, double eps, Tensor& mean, Tensor& invstd) {
  if (training) {
    const bool update = !autograd::is_recomputing();
    kernels::batch_norm_stats(x, update ? running_mean : Tensor(), update ? running_var : Tensor(), momentum, eps,
                              &mean, &invstd);
  } else {
    EMBER_CHECK(running_mean.defined() && running_var.defined(),
                "batch_norm: eval mode normalises with running_mean and running_var, which are undefined (input "
                    << x.shape() << ")");
    EMBER_CHECK(eps > 0.0, "batch_norm: eps must be positive, got " << eps);
    const DType stats = x.dtype() == DType::f64 ? DType::f64 : DType::f32;
    mean = kernels::cast(running_mean, stats);
    invstd = running_invstd(running_var, stats, eps);
  }
}

Tensor batch_norm_maybe_relu(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                             const Tensor& running_var, bool training, double momentum, double eps, bool relu) {
  EMBER_CHECK(x.defined(), (relu ? "batch_norm_relu" : "batch_norm") << ": argument 'x' is an undefined tensor");
  Tensor mean, invstd;
  statistics(x, running_mean, running_var, training, momentum, eps, mean, invstd);
  Tensor y = kernels::batch_norm_apply(x, mean, invstd, weight, bias, relu);
  if (autograd::any_requires_grad({x, weight, bias})) {
    auto node = std::make_shared<BatchNormBackward>(training, relu, x.requires_grad(),
                                                    weight.defined() && weight.requires_grad(),
                                                    bias.defined() && bias.requires_grad());
    save_for_backward(*node, x, mean, invstd, weight);
    node->save(relu ? bias : Tensor());  // the mask's recompute reads the bias (a few floats)
    autograd::record(y, node, {x, weight, bias});
  }
  return y;
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps) {
  return batch_norm_maybe_relu(x, weight, bias, running_mean, running_var, training, momentum, eps, false);
}

Tensor batch_norm_relu(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                       const Tensor& running_var, bool training, double momentum, double eps) {
  return batch_norm_maybe_relu(x, weight, bias, running_mean, running_var, training, momentum, eps, true);
}

Tensor batch_norm_add_relu(const Tensor& x, const Tensor& residual, const Tensor& weight, const Tensor& bias,
                           const Tensor& running_mean, const Tensor& running_var, bool training, double momentum,
                           double eps) {
  EMBER_CHECK(x.defined() && residual.defined(), "batch_norm_add_relu: arguments 'x' and 'residual' must be defined");
  Tensor mean, invstd;
  statistics(x, running_mean, running_var, training, momentum, eps, mean, invstd);
  Tensor y = kernels::batch_norm_apply(x, mean, invstd, weight, bias, /*relu=*/true, residual);
  if (autograd::any_requires_grad({x, residual, weight, bias})) {
    auto node = std::make_shared<BatchNormAddReluBackward>(training, x.requires_grad(), residual.requires_grad(),
                                                           weight.defined() && weight.requires_grad(),
                                                           bias.defined() && bias.requires_grad());
    save_for_backward(*node, x, mean, invstd, weight);
    node->save(y);
    autograd::record(y, node, {x, residual, weight, bias});
  }
  return y;
}

}  // namespace ember
