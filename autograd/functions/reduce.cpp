// Reductions and their gradients: sum and mean spread dy back over the reduced
// dims; max sends it to the position of the (first) maximum.
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "kernels/ops.h"

namespace ember {

using kernels::ReduceOp;

namespace {

// dy with the reduced dim put back as size 1 (a view), so it broadcasts against x.
Tensor with_kept_dim(const Tensor& dy, const Shape& input_shape, int64_t dim, bool keepdim) {
  if (keepdim || input_shape.dim() == 0) return dy;
  std::vector<int64_t> sizes = input_shape.sizes();
  sizes[static_cast<size_t>(dim)] = 1;
  return dy.detach().reshape(Shape(sizes));
}

class SumMeanBackward final : public autograd::Node {
 public:
  // dim < 0 means "over all elements".
  SumMeanBackward(bool mean, Shape input_shape, int64_t dim, bool keepdim)
      : mean_(mean), input_shape_(std::move(input_shape)), dim_(dim), keepdim_(keepdim) {}
  const char* name() const override { return mean_ ? "mean" : "sum"; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    Tensor g = dim_ < 0 ? dy : with_kept_dim(dy, input_shape_, dim_, keepdim_);
    Tensor dx = kernels::expand(g, input_shape_);
    if (mean_) {
      const int64_t n = dim_ < 0 ? input_shape_.numel() : (input_shape_.dim() == 0 ? 1 : input_shape_[dim_]);
      dx = kernels::binary_scalar(kernels::BinaryOp::div, dx, static_cast<double>(n), false);
    }
    return {dx};
  }

 private:
  bool mean_;
  Shape input_shape_;
  int64_t dim_;
  bool keepdim_;
};

class MaxBackward final : public autograd::Node {
 public:
  MaxBackward(Shape input_shape, int64_t dim, bool keepdim)
      : input_shape_(std::move(input_shape)), dim_(dim), keepdim_(keepdim) {}
  const char* name() const override { return "max"; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    const Tensor& indices = saved(0);
    if (dim_ < 0) {  // over all: indices is the flat position
      const Shape flat{input_shape_.numel()};
      Tensor dx = kernels::scatter_dim(dy.detach().reshape(Shape{1}), indices.reshape(Shape{1}), flat, 0);
      return {dx.reshape(input_shape_)};
    }
    if (input_shape_.dim() == 0) return {dy};
    return {kernels::scatter_dim(with_kept_dim(dy, input_shape_, dim_, keepdim_), indices, input_shape_, dim_)};
  }

 private:
  Shape input_shape_;
  int64_t dim_;
  bool keepdim_;
};

Tensor sum_or_mean(bool mean, const Tensor& x, int64_t dim, bool keepdim, bool all) {
  const ReduceOp op = mean ? ReduceOp::mean : ReduceOp::sum;
  if (!all) dim = x.shape().wrap_dim(dim, mean ? "mean" : "sum");
  Tensor y = all ? kernels::reduce_all(op, x) : kernels::reduce_dim(op, x, dim, keepdim);
  if (autograd::any_requires_grad({x}))
    autograd::record(y, std::make_shared<SumMeanBackward>(mean, x.shape(), all ? -1 : dim, keepdim), {x});
  return y;
}

}  // namespace

Tensor sum(const Tensor& x) { return sum_or_mean(false, x, 0, false, true); }
Tensor sum(const Tensor& x, int64_t dim, bool keepdim) { return sum_or_mean(false, x, dim, keepdim, false); }
Tensor mean(const Tensor& x) { return sum_or_mean(true, x, 0, false, true); }
Tensor mean(const Tensor& x, int64_t dim, bool keepdim) { return sum_or_mean(true, x, dim, keepdim, false); }

Tensor max(const Tensor& x) {
  Tensor y = kernels::reduce_all(ReduceOp::max, x);
  if (autograd::any_requires_grad({x})) {
    auto node = std::make_shared<MaxBackward>(x.shape(), -1, false);
    node->save(kernels::argmax_all(x));
    autograd::record(y, node, {x});
  }
  return y;
}

Tensor max(const Tensor& x, int64_t dim, bool keepdim) {
  dim = x.shape().wrap_dim(dim, "max");
  Tensor y = kernels::reduce_dim(ReduceOp::max, x, dim, keepdim);
  if (autograd::any_requires_grad({x})) {
    auto node = std::make_shared<MaxBackward>(x.shape(), dim, keepdim);
    node->save(kernels::argmax_dim(x, dim, /*keepdim=*/true));
    autograd::record(y, node, {x});
  }
  return y;
}

Tensor argmax(const Tensor& x) { return kernels::argmax_all(x); }
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return kernels::argmax_dim(x, dim, keepdim); }

}  // namespace ember
