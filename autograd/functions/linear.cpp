// linear: y = x W^T + b with W stored [out, in] (PyTorch's layout), without
// materialising W^T: the GEMMs take transpose flags.
//   dx = dy W        dW = dy^T x        db = dy summed over the batch
// Inputs with more than two dims are folded into rows ([..., in] -> [rows, in]).
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "core/error.h"
#include "kernels/ops.h"

namespace ember {

namespace {

class LinearBackward final : public autograd::Node {
 public:
  LinearBackward(Shape bias_shape, bool need_x, bool need_w, bool need_b)
      : bias_shape_(std::move(bias_shape)), need_x_(need_x), need_w_(need_w), need_b_(need_b) {}
  const char* name() const override { return "linear"; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    Tensor dx, dw, db;
    if (need_x_) dx = kernels::matmul(dy, saved(1), false, false);  // [N, out] x [out, in]
    if (need_w_) dw = kernels::matmul(dy, saved(0), true, false);   // [N, out]^T x [N, in]
    if (need_b_) db = kernels::sum_to(dy, bias_shape_);
    return {dx, dw, db};
  }

 private:
  Shape bias_shape_;
  bool need_x_, need_w_, need_b_;
};

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(x.defined() && weight.defined(), "linear: input and weight must be defined");
  EMBER_CHECK(weight.dim() == 2, "linear: weight must be [out, in], got " << weight.shape());
  EMBER_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1),
              "linear: input " << x.shape() << " does not match weight " << weight.shape() << " (expected [..., "
                               << weight.size(1) << "])");
  EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)),
              "linear: bias " << bias.shape() << " does not match weight " << weight.shape() << " (expected ["
                              << weight.size(0) << "])");
  if (x.dim() != 2) {
    std::vector<int64_t> out_sizes = x.sizes();
    out_sizes.back() = weight.size(0);
    return reshape(linear(reshape(x, Shape{-1, weight.size(1)}), weight, bias), Shape(out_sizes));
  }
  Tensor y = kernels::matmul(x, weight, false, true);  // [N, in] x [out, in]^T
  if (bias.defined()) y = kernels::binary(kernels::BinaryOp::add, y, bias);
  if (autograd::any_requires_grad({x, weight, bias})) {
    auto node = std::make_shared<LinearBackward>(bias.defined() ? bias.shape() : Shape{}, x.requires_grad(),
                                                 weight.requires_grad(), bias.defined() && bias.requires_grad());
    node->save(weight.requires_grad() ? x : Tensor());  // dW needs x
    node->save(x.requires_grad() ? weight : Tensor());  // dx needs W
    autograd::record(y, node, {x, weight, bias});
  }
  return y;
}

}  // namespace ember
