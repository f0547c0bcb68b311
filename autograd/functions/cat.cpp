// cat (a copy) and stack (unsqueeze + cat). cat's backward splits dy back into the inputs'
// shapes with kernels::slice.
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/record.h"
#include "core/error.h"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember {

namespace {

class CatBackward final : public autograd::Node {
 public:
  CatBackward(int64_t dim, std::vector<Tensor> inputs) : dim_(dim) {
    for (const Tensor& t : inputs) {
      shapes_.push_back(t.shape());
      options_.push_back(TensorOptions(t.dtype()).device(t.device()));
    }
  }
  const char* name() const override { return "cat"; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    std::vector<Tensor> dxs;
    int64_t at = 0;  // where input i starts along dim
    for (size_t i = 0; i < shapes_.size(); ++i) {
      if (kernels::cat_skips(shapes_[i])) {  // left out by forward: an empty gradient
        dxs.push_back(next[i] ? empty(shapes_[i], options_[i]) : Tensor());
        continue;
      }
      const int64_t length = shapes_[i][dim_];
      dxs.push_back(next[i] ? kernels::slice(dy, kernels::SliceArgs{dim_, at, length, 1}) : Tensor());
      at += length;
    }
    return dxs;
  }

 private:
  int64_t dim_;
  std::vector<Shape> shapes_;
  std::vector<TensorOptions> options_;
};

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  Tensor y = kernels::cat(tensors, dim);  // checks everything, dim included
  bool any = false;
  for (const Tensor& t : tensors) any = any || autograd::any_requires_grad({t});
  if (any) {
    dim = y.shape().wrap_dim(dim, "cat");  // y has the rank of the tensors cat joined
    autograd::record(y, std::make_shared<CatBackward>(dim, tensors), tensors);
  }
  return y;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "stack: expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].defined(), "stack: tensor " << i << " is undefined");
    EMBER_CHECK(tensors[i].shape() == tensors[0].shape(), "stack: every tensor must have the same shape, but tensor "
                                                              << i << " is " << tensors[i].shape()
                                                              << " and tensor 0 is " << tensors[0].shape());
  }
  const int64_t n = tensors[0].dim();
  EMBER_CHECK(dim >= -(n + 1) && dim <= n, "stack: dim " << dim << " is out of range for tensors of shape "
                                                        << tensors[0].shape() << " (expected " << -(n + 1) << ".." << n
                                                        << ")");
  if (dim < 0) dim += n + 1;
  std::vector<Tensor> unsqueezed;
  for (const Tensor& t : tensors) unsqueezed.push_back(unsqueeze(t, dim));
  return cat(unsqueezed, dim);
}

}  // namespace ember
