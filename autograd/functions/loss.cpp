// The losses of autograd/ops.h. cross_entropy's unweighted mean is one fused kernel with a node of
// its own; every other form is composed from recorded ops, so its gradients come from those ops'
// nodes: exact compositions, at the cost of a temporary or two of the input's size. Each per-element term is one op where PyTorch
// has a formula of its own (smooth_l1 and huber are unary table lines, binary_cross_entropy and
// its logits form binary ones: core/unary_ops.def, core/binary_ops.def), so the values and
// gradients are PyTorch's, clamps included.
//
//   Tensor loss = ember::huber_loss(prediction, target, ember::Reduction::Sum, /*delta=*/0.5);
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/record.h"
#include "core/error.h"
#include "kernels/ops.h"

namespace ember {

using kernels::BinaryOp;
using kernels::UnaryOp;

namespace {

Tensor reduced(const Tensor& terms, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return terms;
    case Reduction::Sum: return sum(terms);
    case Reduction::Mean: break;
  }
  return mean(terms);
}

// Input and target of one loss: defined, one shape (PyTorch broadcasts some with a warning; here
// a different shape is refused), floating. The binary ops check dtype and device, naming the op.
void check_pair(const Tensor& input, const Tensor& target, const char* op) {
  EMBER_CHECK(input.defined() && target.defined(), op << ": input and target must be defined");
  EMBER_CHECK(input.shape() == target.shape(),
              op << ": input " << input.shape() << " and target " << target.shape() << " differ in shape");
  EMBER_CHECK(is_floating(input.dtype()) && is_floating(target.dtype()),
              op << ": expected floating input and target, got " << input.dtype() << " and " << target.dtype());
}

// log_probs [N, C] and labels [N], as nll_loss takes them.
void check_classes(const Tensor& log_probs, const Tensor& labels, const Tensor& weight, const char* op) {
  EMBER_CHECK(log_probs.defined() && labels.defined(), op << ": log_probs and labels must be defined");
  EMBER_CHECK(log_probs.dim() == 2 && labels.dim() == 1 && labels.size(0) == log_probs.size(0),
              op << ": expected log_probs [N, C] and labels [N], got " << log_probs.shape() << " and "
                 << labels.shape());
  EMBER_CHECK(log_probs.device() == labels.device(),
              op << ": log_probs are on " << log_probs.device() << " but labels on " << labels.device());
  EMBER_CHECK(is_floating(log_probs.dtype()), op << ": expected floating log_probs, got " << log_probs.dtype());
  if (weight.defined())
    EMBER_CHECK(weight.dim() == 1 && weight.size(0) == log_probs.size(1),
                op << ": expected a weight of one value per class [" << log_probs.size(1) << "], got "
                   << weight.shape() << " for log_probs " << log_probs.shape());
}

class CrossEntropyBackward final : public autograd::Node {
 public:
  const char* name() const override { return "cross_entropy"; }
  std::vector<Tensor> apply(const Tensor& dloss) override {
    return {kernels::cross_entropy_backward(saved(0), saved(1), dloss), Tensor()};
  }
};

// The fused mean cross entropy: its loss is f32 (f64 for f64 logits), its node saves the
// log-probabilities and the labels.
Tensor fused_cross_entropy(const Tensor& logits, const Tensor& labels) {
  Tensor log_probs;
  Tensor loss = kernels::cross_entropy(logits, labels, &log_probs);
  if (autograd::any_requires_grad({logits})) {
    auto node = std::make_shared<CrossEntropyBackward>();
    node->save(log_probs);
    node->save(labels);
    autograd::record(loss, node, {logits, labels});
  }
  return loss;
}

// nll_loss naming `op` in its errors (nll_loss, or the cross_entropy that composes it).
// sum(log_probs * one_hot) picks log_probs[i, labels[i]]: adding exact zeros changes nothing, so
// the value is exact; the one-hot is a constant, so the gradient is -one_hot (times the weight)
// reduced as the loss is. (A -inf log-probability off the label would give 0 * -inf = NaN;
// log_softmax of finite logits never gives -inf.) With class weights the one-hot rows carry
// weight[labels[i]], and the mean divides by their sum, as PyTorch's does.
Tensor nll(const Tensor& log_probs, const Tensor& labels, const Tensor& weight, Reduction reduction, const char* op) {
  check_classes(log_probs, labels, weight, op);
  Tensor picks = kernels::one_hot(labels, log_probs.size(1), log_probs.dtype(), op);
  if (weight.defined()) picks = mul(picks, weight.detach());  // class weights are constants, as in PyTorch
  const Tensor terms = neg(sum(mul(log_probs, picks), 1));
  if (reduction != Reduction::Mean || !weight.defined()) return reduced(terms, reduction);
  return div(sum(terms), sum(picks));
}

}  // namespace

const char* reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return "none";
    case Reduction::Mean: return "mean";
    case Reduction::Sum: return "sum";
  }
  return "?";
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_pair(input, target, "mse_loss");
  const Tensor diff = sub(input, target);
  return reduced(mul(diff, diff), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_pair(input, target, "l1_loss");
  return reduced(abs(sub(input, target)), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  check_pair(input, target, "smooth_l1_loss");
  EMBER_CHECK(beta >= 0.0, "smooth_l1_loss: beta must be >= 0, got " << beta << " for input " << input.shape());
  return reduced(unary_op(UnaryOp::smooth_l1, sub(input, target), beta), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  check_pair(input, target, "huber_loss");
  EMBER_CHECK(delta > 0.0, "huber_loss: delta must be > 0, got " << delta << " for input " << input.shape());
  return reduced(unary_op(UnaryOp::huber, sub(input, target), delta), reduction);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction) {
  check_pair(input, target, "binary_cross_entropy");
  Tensor terms = binary_op(BinaryOp::bce, input, target);
  if (weight.defined()) terms = mul(terms, weight.detach());  // a constant, as in PyTorch
  return reduced(terms, reduction);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction) {
  return binary_cross_entropy(input, target, Tensor(), reduction);
}

// Without pos_weight one fused op; with it, (1 - t) x + (1 + (pw - 1) t) softplus(-x) is that op
// plus (pw - 1) t softplus(-x).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  check_pair(input, target, "binary_cross_entropy_with_logits");
  Tensor terms = binary_op(BinaryOp::bce_with_logits, input, target);
  if (pos_weight.defined())
    terms = add(terms, mul(mul(sub(pos_weight.detach(), 1.0), target), unary_op(UnaryOp::softplus, neg(input))));
  if (weight.defined()) terms = mul(terms, weight.detach());  // both weights are constants, as in PyTorch
  return reduced(terms, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, Reduction reduction) {
  return binary_cross_entropy_with_logits(input, target, Tensor(), Tensor(), reduction);
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& labels, const Tensor& weight, Reduction reduction) {
  return nll(log_probs, labels, weight, reduction, "nll_loss");
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& labels, Reduction reduction) {
  return nll_loss(log_probs, labels, Tensor(), reduction);
}

// The unweighted mean is the fused kernel; a weight or another reduction is log_softmax and nll.
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, const Tensor& weight, Reduction reduction) {
  if (!weight.defined() && reduction == Reduction::Mean) return fused_cross_entropy(logits, labels);
  EMBER_CHECK(logits.defined() && labels.defined(), "cross_entropy: logits and labels must be defined");
  EMBER_CHECK(logits.dim() == 2, "cross_entropy: expected logits [N, C] and labels [N], got " << logits.shape() << " and "
                                                                                          << labels.shape());
  return nll(log_softmax(logits, 1), labels, weight, reduction, "cross_entropy");
}

Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Reduction reduction) {
  return cross_entropy(logits, labels, Tensor(), reduction);
}

}  // namespace ember
