// Layout ops: reshape and its forms unsqueeze and squeeze (views sharing storage), transpose
// and permute (materialised).
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "core/error.h"
#include "kernels/ops.h"

namespace ember {

namespace {

class ReshapeBackward final : public autograd::Node {
 public:
  explicit ReshapeBackward(Shape input_shape) : input_shape_(std::move(input_shape)) {}
  const char* name() const override { return "reshape"; }
  std::vector<Tensor> apply(const Tensor& dy) override { return {dy.detach().reshape(input_shape_)}; }

 private:
  Shape input_shape_;
};

class TransposeBackward final : public autograd::Node {
 public:
  TransposeBackward(int64_t dim0, int64_t dim1) : dim0_(dim0), dim1_(dim1) {}
  const char* name() const override { return "transpose"; }
  std::vector<Tensor> apply(const Tensor& dy) override { return {kernels::transpose(dy, dim0_, dim1_)}; }

 private:
  int64_t dim0_, dim1_;
};

class PermuteBackward final : public autograd::Node {
 public:
  explicit PermuteBackward(std::vector<int64_t> inverse) : inverse_(std::move(inverse)) {}
  const char* name() const override { return "permute"; }
  std::vector<Tensor> apply(const Tensor& dy) override { return {kernels::permute(dy, inverse_)}; }

 private:
  std::vector<int64_t> inverse_;
};

Shape infer_shape(const Shape& requested, int64_t numel) {
  std::vector<int64_t> sizes = requested.sizes();
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      EMBER_CHECK(infer_at < 0, "reshape: only one dimension can be -1, got " << requested);
      infer_at = static_cast<int64_t>(i);
    } else {
      EMBER_CHECK(sizes[i] >= 0, "reshape: negative size in " << requested);
      known *= sizes[i];
    }
  }
  if (infer_at >= 0) {
    EMBER_CHECK(known != 0 && numel % known == 0,
                "reshape: cannot infer -1 in " << requested << " for " << numel << " elements");
    sizes[static_cast<size_t>(infer_at)] = numel / known;
  }
  return Shape(sizes);
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  const Shape target = infer_shape(shape, x.numel());
  EMBER_CHECK(target.numel() == x.numel(),
              "reshape: cannot view " << x.shape() << " (" << x.numel() << " elements) as " << shape);
  const TensorImpl& impl = *x.impl();
  Tensor y(impl.storage, impl.offset_bytes, target, impl.dtype, impl.device);
  if (autograd::any_requires_grad({x})) autograd::record(y, std::make_shared<ReshapeBackward>(x.shape()), {x});
  return y;
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  dim0 = x.shape().wrap_dim(dim0, "transpose");
  dim1 = x.shape().wrap_dim(dim1, "transpose");
  Tensor y = kernels::transpose(x, dim0, dim1);
  if (autograd::any_requires_grad({x})) autograd::record(y, std::make_shared<TransposeBackward>(dim0, dim1), {x});
  return y;
}

// A view (reshape) with a size-1 dim inserted before dim.
Tensor unsqueeze(const Tensor& x, int64_t dim) {
  const int64_t n = x.dim();
  EMBER_CHECK(dim >= -(n + 1) && dim <= n, "unsqueeze: dim " << dim << " is out of range for a tensor of shape "
                                                            << x.shape() << " (expected " << -(n + 1) << ".." << n
                                                            << ")");
  if (dim < 0) dim += n + 1;
  std::vector<int64_t> sizes = x.sizes();
  sizes.insert(sizes.begin() + dim, 1);
  return reshape(x, Shape(sizes));
}

// A view (reshape) without x's size-1 dims.
Tensor squeeze(const Tensor& x) {
  std::vector<int64_t> sizes;
  for (int64_t s : x.sizes())
    if (s != 1) sizes.push_back(s);
  return reshape(x, Shape(sizes));
}

// A view (reshape) without dim when its size is 1, of x's shape otherwise.
Tensor squeeze(const Tensor& x, int64_t dim) {
  dim = x.shape().wrap_dim(dim, "squeeze");
  std::vector<int64_t> sizes = x.sizes();
  if (x.dim() > 0 && sizes[static_cast<size_t>(dim)] == 1) sizes.erase(sizes.begin() + dim);
  return reshape(x, Shape(sizes));
}

// A copy: y.size(d) = x.size(dims[d]).
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == x.dim(),
              "permute: " << dims.size() << " dims given for " << x.shape() << ", which has " << x.dim());
  std::vector<int64_t> wrapped, inverse(dims.size(), -1);
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t w = x.shape().wrap_dim(dims[d], "permute");
    EMBER_CHECK(inverse[static_cast<size_t>(w)] < 0,
                "permute: dim " << dims[d] << " appears twice in the permutation of " << x.shape());
    inverse[static_cast<size_t>(w)] = static_cast<int64_t>(d);
    wrapped.push_back(w);
  }
  Tensor y = kernels::permute(x, wrapped);
  if (autograd::any_requires_grad({x})) autograd::record(y, std::make_shared<PermuteBackward>(inverse), {x});
  return y;
}

}  // namespace ember
