// Checked entry points of slicing and joining: slice and its backward, permute and cat. Each
// describes its copy as a BlockCopy (kernels/block_copy.h) and runs the backends' copy_block.
#include <string>
#include <vector>

#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels {

namespace {

// Checks that s takes elements inside `shape` (x's, or the gradient's input) and returns the
// slice's shape.
Shape sliced_shape(const Shape& shape, const SliceArgs& s) {
  EMBER_CHECK(shape.dim() >= 1 && s.dim >= 0 && s.dim < shape.dim(),
              "slice: dim " << s.dim << " is not a dim of " << shape);
  EMBER_CHECK(s.step >= 1 && s.start >= 0 && s.length >= 0 &&
                  (s.length == 0 || s.start + (s.length - 1) * s.step < shape[s.dim]),
              "slice: " << s.length << " elements from " << s.start << " by " << s.step << " do not fit in size "
                        << shape[s.dim] << " of dim " << s.dim << " of " << shape);
  Shape out = shape;
  out[s.dim] = s.length;
  return out;
}

// The BlockCopy between the slice (contiguous, shape `sliced`) and the whole tensor of `shape`;
// gather: slice <- whole; otherwise whole <- slice.
BlockCopy slice_copy(const Shape& shape, const Shape& sliced, const SliceArgs& s, bool gather) {
  std::vector<int64_t> whole = shape.strides();
  const int64_t offset = s.start * whole[static_cast<size_t>(s.dim)];
  whole[static_cast<size_t>(s.dim)] *= s.step;
  const std::vector<int64_t> dense = sliced.strides();
  return gather ? plan_block_copy(sliced.sizes(), whole, offset, dense, 0, "slice")
                : plan_block_copy(sliced.sizes(), dense, 0, whole, offset, "slice_backward");
}

}  // namespace

Tensor slice(const Tensor& x, const SliceArgs& s) {
  check_defined(x, "slice", "x");
  const Shape shape = sliced_shape(x.shape(), s);
  OpNameScope scope("slice");
  Tensor y = empty(shape, TensorOptions(x.dtype()).device(x.device()));
  if (y.numel() > 0) EMBER_BACKEND(x.device(), copy_block, x, slice_copy(x.shape(), shape, s, true), y);
  return y;
}

Tensor slice_backward(const Tensor& dy, const Shape& x_shape, const SliceArgs& s) {
  check_defined(dy, "slice_backward", "dy");
  const Shape shape = sliced_shape(x_shape, s);
  EMBER_CHECK(dy.shape() == shape, "slice_backward: gradient " << dy.shape() << " does not match the slice "
                                                               << shape << " of " << x_shape);
  OpNameScope scope("slice_backward");
  Tensor dx = empty(x_shape, TensorOptions(dy.dtype()).device(dy.device()));
  if (dx.numel() == 0) return dx;
  EMBER_BACKEND(dx.device(), fill_, dx, 0.0);
  if (dy.numel() > 0) EMBER_BACKEND(dy.device(), copy_block, dy, slice_copy(x_shape, shape, s, false), dx);
  return dx;
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  check_defined(x, "permute", "x");
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == x.dim(),
              "permute: " << dims.size() << " dims given for " << x.shape() << " of " << x.dim() << " dims");
  const std::vector<int64_t> x_strides = x.shape().strides();
  std::vector<int64_t> sizes, strides;
  std::vector<bool> used(dims.size(), false);
  for (int64_t d : dims) {
    EMBER_CHECK(d >= 0 && d < x.dim() && !used[static_cast<size_t>(d)],
                "permute: dim " << d << " is repeated or not a dim of " << x.shape());
    used[static_cast<size_t>(d)] = true;
    sizes.push_back(x.size(d));
    strides.push_back(x_strides[static_cast<size_t>(d)]);
  }
  OpNameScope scope("permute");
  Tensor y = empty(Shape(sizes), TensorOptions(x.dtype()).device(x.device()));
  if (y.numel() > 0)
    EMBER_BACKEND(x.device(), copy_block, x, plan_block_copy(sizes, strides, 0, y.shape().strides(), 0, "permute"), y);
  return y;
}

namespace {

// The output shape of cat, after checking every tensor it joins against the first (`ref`).
Shape cat_shape(const std::vector<Tensor>& xs, size_t ref, int64_t dim) {
  const Tensor& r = xs[ref];
  std::vector<int64_t> sizes = r.sizes();
  sizes[static_cast<size_t>(dim)] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& t = xs[i];
    if (cat_skips(t.shape())) continue;
    EMBER_CHECK(t.dtype() == r.dtype(),
                "cat: tensor " << i << " is " << t.dtype() << " but tensor " << ref << " is " << r.dtype());
    EMBER_CHECK(t.device() == r.device(),
                "cat: tensor " << i << " is on " << t.device() << " but tensor " << ref << " is on " << r.device());
    bool match = t.dim() == r.dim();
    for (int64_t d = 0; match && d < r.dim(); ++d) match = d == dim || t.size(d) == r.size(d);
    EMBER_CHECK(match, "cat: sizes must match except in dim " << dim << ", but tensor " << i << " is " << t.shape()
                                                              << " and tensor " << ref << " is " << r.shape());
    sizes[static_cast<size_t>(dim)] += t.size(dim);
  }
  return Shape(sizes);
}

}  // namespace

Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
  EMBER_CHECK(!xs.empty(), "cat: expected a non-empty list of tensors");
  size_t ref = xs.size();
  for (size_t i = 0; i < xs.size(); ++i) {
    EMBER_CHECK(xs[i].defined(), "cat: tensor " << i << " is undefined");
    EMBER_CHECK(xs[i].dim() > 0, "cat: tensor " << i << " is zero-dimensional and cannot be concatenated");
    if (ref == xs.size() && !cat_skips(xs[i].shape())) ref = i;
  }
  OpNameScope scope("cat");
  if (ref == xs.size()) {  // every tensor is [0]: so is the result
    xs[0].shape().wrap_dim(dim, "cat");
    return empty(Shape{0}, TensorOptions(xs[0].dtype()).device(xs[0].device()));
  }
  dim = xs[ref].shape().wrap_dim(dim, "cat");
  const Shape shape = cat_shape(xs, ref, dim);
  Tensor y = empty(shape, TensorOptions(xs[ref].dtype()).device(xs[ref].device()));
  const std::vector<int64_t> y_strides = shape.strides();
  int64_t at = 0;  // where the next tensor starts along dim
  for (const Tensor& t : xs) {
    if (cat_skips(t.shape())) continue;
    if (t.numel() > 0) {
      const BlockCopy b =
          plan_block_copy(t.sizes(), t.shape().strides(), 0, y_strides, at * y_strides[static_cast<size_t>(dim)], "cat");
      EMBER_BACKEND(y.device(), copy_block, t, b, y);
    }
    at += t.size(dim);
  }
  return y;
}

}  // namespace ember::kernels
