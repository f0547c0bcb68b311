// conv2d and its gradients: dx from dy and the weight, dweight from x and dy,
// dbias = dy summed over N, OH, OW. Each input is saved only when another
// input's gradient needs it (x for dweight, weight for dx).
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "kernels/ops.h"

namespace ember {

namespace {

class Conv2dBackward final : public autograd::Node {
 public:
  Conv2dBackward(const kernels::Conv2dArgs& args, Shape x_shape, Shape weight_shape, bool need_x, bool need_weight,
                 bool need_bias)
      : args_(args),
        x_shape_(std::move(x_shape)),
        weight_shape_(std::move(weight_shape)),
        need_x_(need_x),
        need_weight_(need_weight),
        need_bias_(need_bias) {}
  const char* name() const override { return "conv2d"; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    Tensor dx, dweight, dbias;
    if (need_x_) dx = kernels::conv2d_backward_input(dy, saved(1), x_shape_, args_);
    if (need_weight_) dweight = kernels::conv2d_backward_weight(saved(0), dy, weight_shape_, args_);
    if (need_bias_) dbias = kernels::conv2d_backward_bias(dy);
    return {dx, dweight, dbias};
  }

 private:
  kernels::Conv2dArgs args_;
  Shape x_shape_, weight_shape_;
  bool need_x_, need_weight_, need_bias_;
};

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding, Size2 dilation) {
  const kernels::Conv2dArgs args{stride, padding, dilation};
  Tensor y = kernels::conv2d(x, weight, bias, args);
  if (autograd::any_requires_grad({x, weight, bias})) {
    const bool need_x = x.requires_grad(), need_weight = weight.requires_grad();
    const bool need_bias = bias.defined() && bias.requires_grad();
    auto node = std::make_shared<Conv2dBackward>(args, x.shape(), weight.shape(), need_x, need_weight, need_bias);
    node->save(need_weight ? x : Tensor());  // saved(0): dweight needs x
    node->save(need_x ? weight : Tensor());  // saved(1): dx needs the weight
    autograd::record(y, node, {x, weight, bias});
  }
  return y;
}

}  // namespace ember
