// Pooling and its gradients. Max pooling saves its input x, which is alive anyway
// as the previous op's output, and no indices: backward recomputes each window's
// argmax from x (kernels/pool_math.h) and routes dy there. Average pooling saves
// nothing (backward spreads dy evenly over each window). Global average pooling is average pooling
// with one window covering the whole plane.
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "core/error.h"
#include "kernels/ops.h"

namespace ember {

namespace {

class MaxPool2dBackward final : public autograd::Node {
 public:
  explicit MaxPool2dBackward(const kernels::Pool2dArgs& args) : args_(args) {}
  const char* name() const override { return "max_pool2d"; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    return {kernels::max_pool2d_backward(dy, saved(0), args_)};
  }

 private:
  kernels::Pool2dArgs args_;
};

class AvgPool2dBackward final : public autograd::Node {
 public:
  AvgPool2dBackward(Shape x_shape, const kernels::Pool2dArgs& args) : x_shape_(std::move(x_shape)), args_(args) {}
  const char* name() const override { return "avg_pool2d"; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    return {kernels::avg_pool2d_backward(dy, x_shape_, args_)};
  }

 private:
  Shape x_shape_;
  kernels::Pool2dArgs args_;
};

}  // namespace

Tensor max_pool2d(const Tensor& x, Size2 kernel) { return max_pool2d(x, kernel, kernel, 0); }

Tensor max_pool2d(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding, Size2 dilation, bool ceil_mode) {
  EMBER_CHECK(dilation == Size2(1), "max_pool2d: dilation " << dilation << " is not supported (only 1), for input "
                                                             << (x.defined() ? x.shape().str() : "undefined"));
  const kernels::Pool2dArgs args{kernel, stride, padding, ceil_mode};
  Tensor y = kernels::max_pool2d(x, args);
  if (autograd::any_requires_grad({x})) {
    auto node = std::make_shared<MaxPool2dBackward>(args);
    node->save(x);
    autograd::record(y, node, {x});
  }
  return y;
}

Tensor avg_pool2d(const Tensor& x, Size2 kernel) { return avg_pool2d(x, kernel, kernel, 0); }

Tensor avg_pool2d(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding, bool ceil_mode, bool count_include_pad) {
  const kernels::Pool2dArgs args{kernel, stride, padding, ceil_mode, count_include_pad};
  Tensor y = kernels::avg_pool2d(x, args);
  if (autograd::any_requires_grad({x})) autograd::record(y, std::make_shared<AvgPool2dBackward>(x.shape(), args), {x});
  return y;
}

Tensor global_avg_pool2d(const Tensor& x) {
  EMBER_CHECK(x.defined() && x.dim() == 4,
              "global_avg_pool2d: expected input [N, C, H, W], got " << (x.defined() ? x.shape().str() : "undefined"));
  const Size2 plane(x.size(2), x.size(3));
  return avg_pool2d(x, plane, plane, 0);
}

}  // namespace ember
