// Checked entry points: validate once, then hand the call to the backend that
// owns the tensor's device. The backends implement kernels/backend_api.inc and
// kernels/backend_into.inc; for the latter the entry point allocates the outputs first.

#include <algorithm>
#include <string>
#include <vector>

#include "core/cuda_runtime.h"
#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"
#include "kernels/softmax_math.h"  // split_at_dim
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels {

const char* unary_op_name(UnaryOp op) {
  switch (op) {
#define EMBER_UNARY_OP(name, forward, derivative, saves) \
  case UnaryOp::name: return #name;
#define EMBER_UNARY_OP_PUBLIC EMBER_UNARY_OP
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
  }
  return "?";
}

const char* binary_op_name(BinaryOp op) {
  switch (op) {
#define EMBER_BINARY_OP(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads) \
  case BinaryOp::name: return #name;
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP
  }
  return "?";
}

Tensor unary(UnaryOp op, const Tensor& x, double scalar) {
  const char* name = unary_op_name(op);
  check_defined(x, name, "x");
  check_floating(x, name);
  OpNameScope scope(name);
  Tensor y = empty_like(x);
  if (y.numel() > 0) EMBER_BACKEND(x.device(), unary, op, x, scalar, y);
  return y;
}

void unary_(UnaryOp op, const Tensor& x, double scalar) {
  const char* name = unary_op_name(op);
  check_defined(x, name, "x");
  check_floating(x, name);
  bump_version(x);
  if (x.numel() == 0) return;
  OpNameScope scope(name);
  EMBER_BACKEND(x.device(), unary, op, x, scalar, x);
}

Tensor unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, double scalar) {
  const char* name = unary_op_name(op);
  check_same_shape(x, dy, name);
  check_same_shape(y, dy, name);
  check_compatible(x, dy, name);
  check_compatible(y, dy, name);
  OpNameScope scope(name);
  Tensor dx = empty_like(x);
  if (dx.numel() > 0) EMBER_BACKEND(x.device(), unary_backward, op, x, y, dy, scalar, dx);
  return dx;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = binary_op_name(op);
  check_defined(a, name, "a");
  check_defined(b, name, "b");
  check_compatible(a, b, name);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);  // throws naming both shapes
  OpNameScope scope(name);
  Tensor c = empty(shape, TensorOptions(a.dtype()).device(a.device()));
  if (c.numel() > 0) EMBER_BACKEND(a.device(), binary, op, a, b, c);
  return c;
}

Tensor binary_backward(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& dy, bool wrt_b) {
  const char* name = binary_op_name(op);
  check_defined(dy, name, "dy");
  check_compatible(a, dy, name);
  check_compatible(b, dy, name);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  EMBER_CHECK(broadcast_shapes(shape, dy.shape(), name) == dy.shape(),
              name << " backward: gradient " << dy.shape() << " for operands " << a.shape() << " and " << b.shape());
  OpNameScope scope(name);
  Tensor d = empty_like(dy);
  if (d.numel() > 0) EMBER_BACKEND(dy.device(), binary_backward, op, a, b, dy, wrt_b, d);
  return d;
}

Tensor binary_scalar(BinaryOp op, const Tensor& a, double s, bool scalar_first) {
  const char* name = binary_op_name(op);
  check_defined(a, name, "a");
  OpNameScope scope(name);
  Tensor c = empty_like(a);
  if (c.numel() > 0) EMBER_BACKEND(a.device(), binary_scalar, op, a, s, scalar_first, c);
  return c;
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  EMBER_CHECK(broadcast_shapes(x.shape(), shape, "sum_to") == x.shape(),
              "sum_to: " << shape << " does not broadcast to " << x.shape());
  if (x.shape() == shape) return x;
  OpNameScope scope("sum_to");
  Tensor out = empty(shape, TensorOptions(x.dtype()).device(x.device()));
  if (out.numel() > 0) EMBER_BACKEND(x.device(), sum_to, x, out);  // x may be empty: out is zeros then
  return out;
}

Tensor expand(const Tensor& x, const Shape& shape) {
  EMBER_CHECK(broadcast_shapes(x.shape(), shape, "expand") == shape,
              "expand: " << x.shape() << " does not broadcast to " << shape);
  if (x.shape() == shape) return x;
  OpNameScope scope("expand");
  Tensor out = empty(shape, TensorOptions(x.dtype()).device(x.device()));
  if (out.numel() > 0) EMBER_BACKEND(x.device(), expand, x, out);
  return out;
}

Tensor cast(const Tensor& x, DType dtype) {
  check_defined(x, "cast", "x");
  if (x.dtype() == dtype) return x;
  OpNameScope scope("cast");
  Tensor y = empty(x.shape(), TensorOptions(dtype).device(x.device()));
  if (y.numel() > 0) EMBER_BACKEND(x.device(), cast, x, y);
  return y;
}

void fill_(const Tensor& t, double value) {
  check_defined(t, "fill_", "t");
  bump_version(t);
  EMBER_BACKEND(t.device(), fill_, t, value);
}

void add_(const Tensor& dst, const Tensor& src, double alpha) {
  check_same_shape(dst, src, "add_");
  check_compatible(dst, src, "add_");
  bump_version(dst);
  EMBER_BACKEND(dst.device(), add_, dst, src, alpha);
}

void mul_scalar_(const Tensor& dst, double factor) {
  check_defined(dst, "mul_", "dst");
  bump_version(dst);
  EMBER_BACKEND(dst.device(), mul_scalar_, dst, factor);
}

void copy_(const Tensor& dst, const Tensor& src) {
  check_defined(dst, "copy_", "dst");
  check_defined(src, "copy_", "src");
  EMBER_CHECK(dst.numel() == src.numel(),
              "copy_: shape mismatch, destination " << dst.shape() << " vs source " << src.shape());
  // Copying a tensor onto itself writes nothing, so it is not a write for the version counter either.
  if (dst.shares_storage(src) && dst.data_ptr() == src.data_ptr() && dst.dtype() == src.dtype()) return;
  bump_version(dst);
  // The CUDA side owns every copy that touches a GPU (host<->device included).
  const Device owner = dst.device().is_cuda() ? dst.device() : src.device().is_cuda() ? src.device() : kCPU;
  EMBER_BACKEND(owner, copy_, dst, src);
}

void arange_(const Tensor& t, double start, double step) {
  check_defined(t, "arange_", "t");
  bump_version(t);
  EMBER_BACKEND(t.device(), arange_, t, start, step);
}

void uniform_(const Tensor& t, GeneratorState state, double low, double high) {
  check_floating(t, "uniform_");
  bump_version(t);
  EMBER_BACKEND(t.device(), uniform_, t, state, low, high);
}

void normal_(const Tensor& t, GeneratorState state, double mean, double std) {
  check_floating(t, "normal_");
  bump_version(t);
  EMBER_BACKEND(t.device(), normal_, t, state, mean, std);
}

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

Tensor reduce_all(ReduceOp op, const Tensor& x) {
  const char* name = reduce_op_name(op);
  check_defined(x, name, "x");
  check_floating(x, name);
  EMBER_CHECK(op != ReduceOp::max || x.numel() > 0, "max: the tensor " << x.shape() << " is empty");
  OpNameScope scope(name);
  Tensor y = empty(Shape{}, TensorOptions(x.dtype()).device(x.device()));
  EMBER_BACKEND(x.device(), reduce_all, op, x, y);  // y has one element even when x is empty
  return y;
}

Tensor reduce_dim(ReduceOp op, const Tensor& x, int64_t dim, bool keepdim) {
  const char* name = reduce_op_name(op);
  check_defined(x, name, "x");
  check_floating(x, name);
  dim = x.shape().wrap_dim(dim, name);
  EMBER_CHECK(op != ReduceOp::max || x.dim() == 0 || x.size(dim) > 0,
              "max: dim " << dim << " of " << x.shape() << " is empty");
  OpNameScope scope(name);
  Tensor y = empty(reduced_shape(x.shape(), dim, keepdim), TensorOptions(x.dtype()).device(x.device()));
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

namespace {

// "[1, 0]": the coordinates of flat position `at` in `shape`.
std::string coordinates(const Shape& shape, int64_t at) {
  std::vector<int64_t> coords(static_cast<size_t>(shape.dim()));
  for (int64_t d = shape.dim() - 1; d >= 0; --d) {
    coords[static_cast<size_t>(d)] = shape[d] > 0 ? at % shape[d] : 0;
    at = shape[d] > 0 ? at / shape[d] : 0;
  }
  std::string text = "[";
  for (size_t d = 0; d < coords.size(); ++d) text += (d ? ", " : "") + std::to_string(coords[d]);
  return text + "]";
}

}  // namespace

OutOfRange find_out_of_range(const Tensor& indices, int64_t limit) {
  check_defined(indices, "find_out_of_range", "indices");
  check_dtype(indices, DType::i64, "find_out_of_range", "indices");
  return EMBER_BACKEND(indices.device(), find_out_of_range, indices, limit);
}

void check_label_range(const Tensor& labels, int64_t classes, const char* op) {
  const OutOfRange bad = EMBER_BACKEND(labels.device(), find_out_of_range, labels, classes);
  if (bad.found()) throw_bad_label(op, bad.position, bad.value, classes);
}

void check_index_range(const Tensor& indices, int64_t limit, const char* op, const std::string& range_of) {
  const OutOfRange bad = EMBER_BACKEND(indices.device(), find_out_of_range, indices, limit);
  if (!bad.found()) return;
  EMBER_THROW(op << ": index " << bad.value << " at " << coordinates(indices.shape(), bad.position) << " of indices "
                 << indices.shape() << " is out of range " << range_of << " (expected 0 <= index < " << limit
                 << ")");
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

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  check_defined(a, "matmul", "a");
  check_defined(b, "matmul", "b");
  check_compatible(a, b, "matmul");
  check_floating(a, "matmul");
  EMBER_CHECK((a.dim() == 2 || a.dim() == 3) && (b.dim() == 2 || b.dim() == 3) && !(a.dim() == 2 && b.dim() == 3),
              "matmul: expected [M, K] x [K, N], [B, M, K] x [B, K, N] or [B, M, K] x [K, N], got " << a.shape()
                                                                                                    << " and " << b.shape());
  const int64_t k_a = transpose_a ? a.size(-2) : a.size(-1);
  const int64_t k_b = transpose_b ? b.size(-1) : b.size(-2);
  EMBER_CHECK(k_a == k_b, "matmul: inner dimensions differ, " << a.shape() << (transpose_a ? "^T" : "") << " x "
                                                              << b.shape() << (transpose_b ? "^T" : "") << " ("
                                                              << k_a << " vs " << k_b << ")");
  EMBER_CHECK(a.dim() == 2 || b.dim() == 2 || a.size(0) == b.size(0),
              "matmul: batch sizes differ, " << a.shape() << " and " << b.shape());
  const int64_t m = transpose_a ? a.size(-1) : a.size(-2);
  const int64_t n = transpose_b ? b.size(-2) : b.size(-1);
  OpNameScope scope("matmul");
  Tensor c = empty(a.dim() == 3 ? Shape{a.size(0), m, n} : Shape{m, n}, TensorOptions(a.dtype()).device(a.device()));
  if (c.numel() == 0) return c;
  if (k_a == 0) EMBER_BACKEND(c.device(), fill_, c, 0.0);  // an empty sum
  else EMBER_BACKEND_WITH_SCRATCH(a.device(), matmul, a, b, transpose_a, transpose_b, c);
  return c;
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  check_defined(x, "transpose", "x");
  dim0 = x.shape().wrap_dim(dim0, "transpose");
  dim1 = x.shape().wrap_dim(dim1, "transpose");
  const int64_t d0 = std::min(dim0, dim1), d1 = std::max(dim0, dim1);
  OpNameScope scope("transpose");
  Tensor y = empty(x.shape().transposed(d0, d1), TensorOptions(x.dtype()).device(x.device()));
  if (y.numel() == 0) return y;
  if (d0 == d1) {
    copy_(y, x);
    return y;
  }
  TransposeLayout t;
  for (int64_t d = 0; d < d0; ++d) t.outer *= x.size(d);
  for (int64_t d = d0 + 1; d < d1; ++d) t.mid *= x.size(d);
  for (int64_t d = d1 + 1; d < x.dim(); ++d) t.inner *= x.size(d);
  t.a = x.size(d0);
  t.b = x.size(d1);
  EMBER_BACKEND(x.device(), transpose, x, t, y);
  return y;
}

Tensor softmax(const Tensor& x, int64_t dim) {
  check_floating(x, "softmax");
  dim = x.shape().wrap_dim(dim, "softmax");
  OpNameScope scope("softmax");
  Tensor y = empty_like(x);
  if (y.numel() > 0) EMBER_BACKEND(x.device(), softmax, x, dim, y);
  return y;
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  check_floating(x, "log_softmax");
  dim = x.shape().wrap_dim(dim, "log_softmax");
  OpNameScope scope("log_softmax");
  Tensor y = empty_like(x);
  if (y.numel() > 0) EMBER_BACKEND(x.device(), log_softmax, x, dim, y);
  return y;
}

Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim) {
  check_same_shape(y, dy, "softmax_backward");
  check_compatible(y, dy, "softmax_backward");
  dim = y.shape().wrap_dim(dim, "softmax_backward");
  OpNameScope scope("softmax_backward");
  Tensor dx = empty_like(y);
  if (dx.numel() > 0) EMBER_BACKEND(y.device(), softmax_backward, y, dy, dim, dx);
  return dx;
}

Tensor log_softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim) {
  check_same_shape(y, dy, "log_softmax_backward");
  check_compatible(y, dy, "log_softmax_backward");
  dim = y.shape().wrap_dim(dim, "log_softmax_backward");
  OpNameScope scope("log_softmax_backward");
  Tensor dx = empty_like(y);
  if (dx.numel() > 0) EMBER_BACKEND(y.device(), log_softmax_backward, y, dy, dim, dx);
  return dx;
}

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

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdOptions& options,
               bool first_step) {
  check_same_shape(param, grad, "sgd_step");
  check_compatible(param, grad, "sgd_step");
  if (options.momentum != 0.0) {
    check_same_shape(param, momentum_buffer, "sgd_step");
    check_compatible(param, momentum_buffer, "sgd_step");
  }
  // Without momentum the buffer is neither read nor written.
  if (options.momentum != 0.0) bump_version(param, momentum_buffer);
  else bump_version(param);
  EMBER_BACKEND(param.device(), sgd_step_, param, grad, momentum_buffer, options, first_step);
}

void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const AdamOptions& options, int64_t step) {
  const char* op = options.decoupled ? "adamw_step" : "adam_step";
  check_defined(param, op, "param");
  check_floating(param, op);
  const std::pair<const Tensor*, const char*> others[] = {{&grad, "grad"}, {&exp_avg, "exp_avg"},
                                                          {&exp_avg_sq, "exp_avg_sq"}};
  for (const auto& [t, name] : others) {
    check_defined(*t, op, name);
    check_same_shape(param, *t, op);
    check_compatible(param, *t, op);
  }
  // step 0 would divide by the bias correction 1 - beta^0 = 0.
  EMBER_CHECK(step >= 1, op << ": step must be >= 1 (the first update is step 1), got " << step);
  bump_version(param, exp_avg, exp_avg_sq);
  EMBER_BACKEND(param.device(), adam_step_, param, grad, exp_avg, exp_avg_sq, options, step);
}

}  // namespace ember::kernels
