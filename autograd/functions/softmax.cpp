// softmax and log_softmax with their gradients (cross entropy: functions/loss.cpp).
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "kernels/ops.h"

namespace ember {

namespace {

class SoftmaxBackward final : public autograd::Node {
 public:
  SoftmaxBackward(bool log, int64_t dim) : log_(log), dim_(dim) {}
  const char* name() const override { return log_ ? "log_softmax" : "softmax"; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    return {log_ ? kernels::log_softmax_backward(saved(0), dy, dim_) : kernels::softmax_backward(saved(0), dy, dim_)};
  }

 private:
  bool log_;
  int64_t dim_;
};

Tensor softmax_op(bool log, const Tensor& x, int64_t dim) {
  dim = x.shape().wrap_dim(dim, log ? "log_softmax" : "softmax");
  Tensor y = log ? kernels::log_softmax(x, dim) : kernels::softmax(x, dim);
  if (autograd::any_requires_grad({x})) {
    auto node = std::make_shared<SoftmaxBackward>(log, dim);
    node->save(y);
    autograd::record(y, node, {x});
  }
  return y;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_op(false, x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_op(true, x, dim); }

}  // namespace ember
