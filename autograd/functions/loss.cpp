// mse_loss and nll_loss, composed from recorded ops, so their gradients come from those ops'
// nodes: exact compositions, at the cost of one temporary of the input's size.
#include "autograd/ops.h"
#include "core/error.h"
#include "kernels/ops.h"

namespace ember {

Tensor mse_loss(const Tensor& input, const Tensor& target) {
  EMBER_CHECK(input.defined() && target.defined(), "mse_loss: input and target must be defined");
  EMBER_CHECK(input.shape() == target.shape(),
              "mse_loss: input " << input.shape() << " and target " << target.shape() << " differ in shape");
  const Tensor diff = sub(input, target);
  return mean(mul(diff, diff));
}

// sum(log_probs * one_hot) picks log_probs[i, labels[i]]: adding exact zeros changes nothing, so
// the value is exact; the one-hot is a constant, so the gradient is -one_hot / N. (A -inf
// log-probability off the label would give 0 * -inf = NaN; log_softmax of finite logits never
// gives -inf.)
Tensor nll_loss(const Tensor& log_probs, const Tensor& labels) {
  EMBER_CHECK(log_probs.defined() && labels.defined(), "nll_loss: log_probs and labels must be defined");
  EMBER_CHECK(log_probs.dim() == 2 && labels.dim() == 1 && labels.size(0) == log_probs.size(0),
              "nll_loss: expected log_probs [N, C] and labels [N], got " << log_probs.shape() << " and "
                                                                         << labels.shape());
  EMBER_CHECK(log_probs.device() == labels.device(), "nll_loss: log_probs are on " << log_probs.device()
                                                         << " but labels on " << labels.device());
  EMBER_CHECK(is_floating(log_probs.dtype()),
              "nll_loss: expected floating log_probs, got " << dtype_name(log_probs.dtype()));
  const Tensor picks = kernels::one_hot(labels, log_probs.size(1), log_probs.dtype(), "nll_loss");
  return neg(mean(sum(mul(log_probs, picks), 1)));
}

}  // namespace ember
