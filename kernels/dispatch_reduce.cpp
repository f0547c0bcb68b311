// Checked entry points of the reductions: sum, mean, max, argmax and scatter_dim (kernels/{cpu,cuda}/reduce).
#include <string>
#include <vector>

#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"
#include "kernels/softmax_math.h"  // split_at_dim
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels {

static const char* reduce_op_name(ReduceOp op) {
  return op == ReduceOp::sum ? "sum" : op == ReduceOp::mean ? "mean" : "max";
}

namespace {
// x's shape without dim (size 1 there with keepdim); a 0-d x stays 0-d.
Shape reduced_shape(const Shape& shape, int64_t dim, bool keepdim) {
  if (shape.dim() == 0) return shape;
  std::vector<int64_t> sizes = shape.sizes();
  if (keepdim) sizes[static_cast<size_t>(dim)] = 1;
  else sizes.erase(sizes.begin() + dim);
  return Shape(sizes);
}
}  // namespace

namespace {
// Integer tensors (u8 comparisons, i64 counts) may be summed, exactly, into i64, as in PyTorch;
// mean and max take floating ones.
void check_reducible(ReduceOp op, const Tensor& x, const char* name) {
  check_defined(x, name, "x");
  if (op != ReduceOp::sum) check_floating(x, name);
}
}  // namespace

Tensor reduce_all(ReduceOp op, const Tensor& x) {
  const char* name = reduce_op_name(op);
  check_reducible(op, x, name);
  EMBER_CHECK(op != ReduceOp::max || x.numel() > 0, "max: the tensor " << x.shape() << " is empty");
  OpNameScope scope(name);
  Tensor y = empty(Shape{}, TensorOptions(reduce_dtype(x.dtype())).device(x.device()));
  EMBER_BACKEND(x.device(), reduce_all, op, x, y);  // y has one element even when x is empty
  return y;
}

Tensor reduce_dim(ReduceOp op, const Tensor& x, int64_t dim, bool keepdim) {
  const char* name = reduce_op_name(op);
  check_reducible(op, x, name);
  dim = x.shape().wrap_dim(dim, name);
  EMBER_CHECK(op != ReduceOp::max || x.dim() == 0 || x.size(dim) > 0,
              "max: dim " << dim << " of " << x.shape() << " is empty");
  OpNameScope scope(name);
  Tensor y = empty(reduced_shape(x.shape(), dim, keepdim), TensorOptions(reduce_dtype(x.dtype())).device(x.device()));
  if (y.numel() > 0) EMBER_BACKEND(x.device(), reduce_dim, op, x, dim, y);
  return y;
}

Tensor argmax_all(const Tensor& x) {
  check_defined(x, "argmax", "x");
  EMBER_CHECK(x.numel() > 0, "argmax: the tensor " << x.shape() << " is empty");
  OpNameScope scope("argmax");
  Tensor y = empty(Shape{}, TensorOptions(DType::i64).device(x.device()));
  EMBER_BACKEND(x.device(), argmax_all, x, y);
  return y;
}

Tensor argmax_dim(const Tensor& x, int64_t dim, bool keepdim) {
  check_defined(x, "argmax", "x");
  dim = x.shape().wrap_dim(dim, "argmax");
  EMBER_CHECK(x.dim() == 0 || x.size(dim) > 0, "argmax: dim " << dim << " of " << x.shape() << " is empty");
  OpNameScope scope("argmax");
  Tensor y = empty(reduced_shape(x.shape(), dim, keepdim), TensorOptions(DType::i64).device(x.device()));
  if (y.numel() > 0) EMBER_BACKEND(x.device(), argmax_dim, x, dim, y);
  return y;
}


Tensor scatter_dim(const Tensor& dy, const Tensor& indices, const Shape& shape, int64_t dim) {
  check_defined(dy, "scatter_dim", "dy");
  check_dtype(indices, DType::i64, "scatter_dim", "indices");
  check_same_device(dy, indices, "scatter_dim");
  check_same_shape(dy, indices, "scatter_dim");
  dim = shape.wrap_dim(dim, "scatter_dim");
  const DimSplit s = split_at_dim(shape, dim);
  EMBER_CHECK(dy.numel() == s.outer * s.inner,
              "scatter_dim: gradient " << dy.shape() << " does not match " << shape << " reduced along dim " << dim);
  check_index_range(indices, s.n, "scatter_dim", "for dim " + std::to_string(dim) + " of " + shape.str());
  OpNameScope scope("scatter_dim");
  Tensor dx = empty(shape, TensorOptions(dy.dtype()).device(dy.device()));
  if (dx.numel() > 0) EMBER_BACKEND(dy.device(), scatter_dim, dy, indices, dim, dx);
  return dx;
}

}  // namespace ember::kernels
