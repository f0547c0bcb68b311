// Checked entry points of the elementwise ops: unary, binary, compare, sum_to, expand, cast, fill_, add_, mul_,
// copy_.
#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"
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
#define EMBER_BINARY_OP_PUBLIC EMBER_BINARY_OP
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP_PUBLIC
#undef EMBER_BINARY_OP
  }
  return "?";
}

const char* compare_op_name(CompareOp op) {
  switch (op) {
#define EMBER_COMPARE_OP(name, forward) \
  case CompareOp::name: return #name;
#include "core/compare_ops.def"
#undef EMBER_COMPARE_OP
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

namespace {

// The operands of a broadcasting op (binary, compare): defined, of one dtype and device; their
// broadcast shape (which throws naming both shapes when there is none).
Shape broadcast_operands(const Tensor& a, const Tensor& b, const char* name) {
  check_defined(a, name, "a");
  check_defined(b, name, "b");
  check_compatible(a, b, name);
  return broadcast_shapes(a.shape(), b.shape(), name);
}

}  // namespace

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = binary_op_name(op);
  const Shape shape = broadcast_operands(a, b, name);
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

Tensor compare(CompareOp op, const Tensor& a, const Tensor& b) {
  const char* name = compare_op_name(op);
  const Shape shape = broadcast_operands(a, b, name);
  OpNameScope scope(name);
  Tensor c = empty(shape, TensorOptions(DType::u8).device(a.device()));
  if (c.numel() > 0) EMBER_BACKEND(a.device(), compare, op, a, b, c);
  return c;
}

Tensor compare_scalar(CompareOp op, const Tensor& a, double s) {
  const char* name = compare_op_name(op);
  check_defined(a, name, "a");
  OpNameScope scope(name);
  Tensor c = empty(a.shape(), TensorOptions(DType::u8).device(a.device()));
  if (c.numel() > 0) EMBER_BACKEND(a.device(), compare_scalar, op, a, s, c);
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

}  // namespace ember::kernels
