// Elementwise ops and their gradients. Binary gradients are summed back to each
// input's shape (sum_to) so broadcasting is differentiable.
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "kernels/factories.h"
#include "kernels/functors.h"
#include "kernels/ops.h"

namespace ember {

using kernels::BinaryOp;
using kernels::UnaryOp;

namespace {

class UnaryBackward final : public autograd::Node {
 public:
  UnaryBackward(UnaryOp op, double scalar) : op_(op), scalar_(scalar) {}
  const char* name() const override { return kernels::unary_op_name(op_); }
  std::vector<Tensor> apply(const Tensor& dy) override {
    // Only one of x and y is saved (or neither); the other argument is a same-shaped stand-in never read.
    const Tensor& kept = kernels::unary_saved(op_) == kernels::UnarySaved::none ? dy : saved(0);
    return {kernels::unary_backward(op_, kept, kept, dy, scalar_)};
  }

 private:
  UnaryOp op_;
  double scalar_;
};


// The gradient of one operand from core/binary_ops.def, at dy's shape. Operands the formula
// does not read may be undefined (nothing was saved for them): dy stands in, never read.
Tensor operand_grad(BinaryOp op, bool wrt_b, const Tensor& a, const Tensor& b, const Tensor& dy) {
  if (kernels::binary_grad_reads(op, wrt_b) == kernels::BinaryReads::none) {
    const double factor = kernels::binary_grad_factor(op, wrt_b);
    return factor == 1.0 ? dy : kernels::binary_scalar(BinaryOp::mul, dy, factor, false);
  }
  return kernels::binary_backward(op, a.defined() ? a : dy, b.defined() ? b : dy, dy, wrt_b);
}

// Saves, of a and b, only what the gradients asked for read (x * mask keeps the mask, not x).
void save_operands(autograd::Node& node, BinaryOp op, const Tensor& a, const Tensor& b, bool need_a, bool need_b) {
  const bool keep_a = (need_a && kernels::binary_grad_reads_a(op, false)) || (need_b && kernels::binary_grad_reads_a(op, true));
  const bool keep_b = (need_a && kernels::binary_grad_reads_b(op, false)) || (need_b && kernels::binary_grad_reads_b(op, true));
  node.save(keep_a ? a : Tensor());
  node.save(keep_b ? b : Tensor());
}

// a op b: each operand's gradient summed back to its shape (broadcasting is differentiable).
class BinaryBackward final : public autograd::Node {
 public:
  BinaryBackward(BinaryOp op, Shape a_shape, Shape b_shape, bool need_a, bool need_b)
      : op_(op), a_shape_(std::move(a_shape)), b_shape_(std::move(b_shape)), need_a_(need_a), need_b_(need_b) {}
  const char* name() const override { return kernels::binary_op_name(op_); }
  std::vector<Tensor> apply(const Tensor& dy) override {
    Tensor da, db;
    if (need_a_) da = kernels::sum_to(operand_grad(op_, false, saved(0), saved(1), dy), a_shape_);
    if (need_b_) db = kernels::sum_to(operand_grad(op_, true, saved(0), saved(1), dy), b_shape_);
    return {da, db};
  }

 private:
  BinaryOp op_;
  Shape a_shape_, b_shape_;
  bool need_a_, need_b_;
};

// Makes c = a op b's node when a gradient is wanted (c may hold a's reused bytes).
void record_binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& c) {
  if (!autograd::any_requires_grad({a, b})) return;
  auto node = std::make_shared<BinaryBackward>(op, a.shape(), b.shape(), a.requires_grad(), b.requires_grad());
  save_operands(*node, op, a, b, a.requires_grad(), b.requires_grad());
  autograd::record(c, node, {a, b});
}

// a op s, or s op a: the same table, with s as a 0-d operand when the formula reads it.
class ScalarBackward final : public autograd::Node {
 public:
  ScalarBackward(BinaryOp op, double s, bool scalar_first) : op_(op), s_(s), scalar_first_(scalar_first) {}
  const char* name() const override { return kernels::binary_op_name(op_); }
  std::vector<Tensor> apply(const Tensor& dy) override {
    const bool reads_s = scalar_first_ ? kernels::binary_grad_reads_a(op_, true) : kernels::binary_grad_reads_b(op_, false);
    const Tensor s = reads_s ? scalar_tensor(s_, TensorOptions(dy.dtype()).device(dy.device())) : Tensor();
    const Tensor& x = saved(0);
    return {scalar_first_ ? operand_grad(op_, true, s, x, dy) : operand_grad(op_, false, x, s, dy)};
  }

 private:
  BinaryOp op_;
  double s_;
  bool scalar_first_;
};

Tensor scalar_op(BinaryOp op, const Tensor& a, double s, bool scalar_first) {
  Tensor c = kernels::binary_scalar(op, a, s, scalar_first);
  if (autograd::any_requires_grad({a})) {
    auto node = std::make_shared<ScalarBackward>(op, s, scalar_first);
    const bool reads_a = scalar_first ? kernels::binary_grad_reads_b(op, true) : kernels::binary_grad_reads_a(op, false);
    node->save(reads_a ? a : Tensor());
    autograd::record(c, node, {a});
  }
  return c;
}

// Makes y = op(x)'s node when a gradient is wanted, saving what the derivative reads.
void record_unary(UnaryOp op, double scalar, const Tensor& x, Tensor& y) {
  if (!autograd::any_requires_grad({x})) return;
  auto node = std::make_shared<UnaryBackward>(op, scalar);
  if (kernels::unary_saved(op) != kernels::UnarySaved::none) node->save(kernels::unary_backward_needs_input(op) ? x : y);
  autograd::record(y, node, {x});
}

// True when t's bytes can be overwritten unseen: no other handle, view or saved alias shares
// them, and it is not a leaf that requires grad.
bool can_reuse(const Tensor& t) {
  return t.defined() && t.impl_ptr().use_count() == 1 && t.storage() != nullptr && t.storage().use_count() == 1 &&
         !(t.is_leaf() && t.requires_grad());
}

// unary_op written into x's bytes when x can be reused and the gradient needs only y.
Tensor unary_op_reusing(UnaryOp op, Tensor&& x) {
  if (!can_reuse(x) || kernels::unary_backward_needs_input(op)) return unary_op(op, x);
  kernels::unary_(op, x, 0.0);
  Tensor y = x.detach();  // the same bytes under a new handle, on which the node is recorded
  record_unary(op, 0.0, x, y);  // saves y: ops whose derivative reads x never get here
  x = Tensor();  // a temporary lives to the end of the caller's expression: let go of the bytes now
  return y;
}

}  // namespace

Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b) {
  Tensor c = kernels::binary(op, a, b);
  record_binary(op, a, b, c);
  return c;
}

Tensor unary_op(UnaryOp op, const Tensor& x, double scalar) {
  Tensor y = kernels::unary(op, x, scalar);
  record_unary(op, scalar, x, y);
  return y;
}

#define EMBER_BINARY_OP(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads)
#define EMBER_BINARY_OP_PUBLIC(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads) \
  Tensor name(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::name, a, b); }
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP_PUBLIC
#undef EMBER_BINARY_OP
Tensor add(Tensor&& a, const Tensor& b) {
  if (!can_reuse(a) || a.shape() != b.shape() || a.dtype() != b.dtype() || a.device() != b.device())
    return binary_op(BinaryOp::add, a, b);
  kernels::add_(a, b, 1.0);
  Tensor c = a.detach();
  record_binary(BinaryOp::add, a, b, c);  // add's gradients read neither operand: nothing is saved
  a = Tensor();  // so that relu(add(...)) can reuse the bytes in turn
  return c;
}
Tensor add(const Tensor& a, double s) { return scalar_op(BinaryOp::add, a, s, false); }
Tensor sub(const Tensor& a, double s) { return scalar_op(BinaryOp::sub, a, s, false); }
Tensor mul(const Tensor& a, double s) { return scalar_op(BinaryOp::mul, a, s, false); }
Tensor div(const Tensor& a, double s) { return scalar_op(BinaryOp::div, a, s, false); }
Tensor rsub(const Tensor& a, double s) { return scalar_op(BinaryOp::sub, a, s, true); }
Tensor rdiv(const Tensor& a, double s) { return scalar_op(BinaryOp::div, a, s, true); }
Tensor pow(const Tensor& x, double exponent) { return unary_op(UnaryOp::pow, x, exponent); }
#define EMBER_UNARY_OP(name, forward, derivative, saves)
#define EMBER_UNARY_OP_PUBLIC(name, forward, derivative, saves) \
  Tensor name(const Tensor& x) { return unary_op(UnaryOp::name, x); }
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
Tensor relu(Tensor&& x) { return unary_op_reusing(UnaryOp::relu, std::move(x)); }

}  // namespace ember
