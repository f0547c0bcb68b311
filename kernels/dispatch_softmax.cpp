// Checked entry points of softmax, log_softmax and cross entropy, forward and backward.
#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels {

namespace {

// softmax and log_softmax share their checks and allocation; `log` picks the backend.
Tensor softmax_forward(const Tensor& x, int64_t dim, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  check_floating(x, op);
  dim = x.shape().wrap_dim(dim, op);
  OpNameScope scope(op);
  Tensor y = empty_like(x);
  if (y.numel() == 0) return y;
  if (log) EMBER_BACKEND(x.device(), log_softmax, x, dim, y);
  else EMBER_BACKEND(x.device(), softmax, x, dim, y);
  return y;
}

Tensor softmax_gradient(const Tensor& y, const Tensor& dy, int64_t dim, bool log) {
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  check_same_shape(y, dy, op);
  check_compatible(y, dy, op);
  dim = y.shape().wrap_dim(dim, op);
  OpNameScope scope(op);
  Tensor dx = empty_like(y);
  if (dx.numel() == 0) return dx;
  if (log) EMBER_BACKEND(y.device(), log_softmax_backward, y, dy, dim, dx);
  else EMBER_BACKEND(y.device(), softmax_backward, y, dy, dim, dx);
  return dx;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_forward(x, dim, false); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_forward(x, dim, true); }
Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim) { return softmax_gradient(y, dy, dim, false); }
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim) { return softmax_gradient(y, dy, dim, true); }

Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Tensor* log_probs) {
  check_floating(logits, "cross_entropy");
  check_dtype(labels, DType::i64, "cross_entropy", "labels");
  check_same_device(logits, labels, "cross_entropy");
  EMBER_CHECK(logits.dim() == 2 && labels.dim() == 1 && labels.size(0) == logits.size(0),
              "cross_entropy: expected logits [N, C] and labels [N], got " << logits.shape() << " and "
                                                                           << labels.shape());
  EMBER_CHECK(logits.size(0) > 0, "cross_entropy: empty batch " << logits.shape());
  check_label_range(labels, logits.size(1), "cross_entropy");
  OpNameScope scope("cross_entropy");
  Tensor lp = empty_like(logits);
  Tensor loss = empty(Shape{}, TensorOptions(cross_entropy_loss_dtype(logits.dtype())).device(logits.device()));
  EMBER_BACKEND(logits.device(), cross_entropy, logits, labels, lp, loss);  // N > 0 was checked
  if (log_probs != nullptr) *log_probs = lp;
  return loss;
}

Tensor cross_entropy_backward(const Tensor& log_probs, const Tensor& labels, const Tensor& dloss) {
  check_floating(log_probs, "cross_entropy_backward");
  check_dtype(labels, DType::i64, "cross_entropy_backward", "labels");
  check_same_device(log_probs, labels, "cross_entropy_backward");
  check_same_device(log_probs, dloss, "cross_entropy_backward");
  EMBER_CHECK(log_probs.dim() == 2 && labels.dim() == 1 && labels.size(0) == log_probs.size(0) && dloss.numel() == 1,
              "cross_entropy_backward: expected log_probs [N, C], labels [N] and a one-element dloss, got "
                  << log_probs.shape() << ", " << labels.shape() << " and " << dloss.shape());
  // Checked again: the backend indexes with them, and the labels need not be the forward's.
  check_label_range(labels, log_probs.size(1), "cross_entropy_backward");
  OpNameScope scope("cross_entropy_backward");
  Tensor dlogits = empty_like(log_probs);
  if (dlogits.numel() > 0) EMBER_BACKEND(log_probs.device(), cross_entropy_backward, log_probs, labels, dloss, dlogits);
  return dlogits;
}

}  // namespace ember::kernels
