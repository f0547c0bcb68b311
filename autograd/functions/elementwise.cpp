// Elementwise ops and their gradients. Binary gradients are summed back to each
// input's shape (sum_to) so broadcasting is differentiable.
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
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

Tensor unary_op(UnaryOp op, const Tensor& x, double scalar = 0.0) {
  Tensor y = kernels::unary(op, x, scalar);
  if (autograd::any_requires_grad({x})) {
    auto node = std::make_shared<UnaryBackward>(op, scalar);
    if (kernels::unary_saved(op) != kernels::UnarySaved::none) node->save(kernels::unary_backward_needs_input(op) ? x : y);
    autograd::record(y, node, {x});
  }
  return y;
}

class BinaryBackward final : public autograd::Node {
 public:
  BinaryBackward(BinaryOp op, Shape a_shape, Shape b_shape, bool need_a, bool need_b)
      : op_(op), a_shape_(std::move(a_shape)), b_shape_(std::move(b_shape)), need_a_(need_a), need_b_(need_b) {}
  const char* name() const override { return kernels::binary_op_name(op_); }
  std::vector<Tensor> apply(const Tensor& dy) override {
    Tensor da, db;
    switch (op_) {
      case BinaryOp::add:
        if (need_a_) da = dy;
        if (need_b_) db = dy;
        break;
      case BinaryOp::sub:
        if (need_a_) da = dy;
        if (need_b_) db = kernels::unary(UnaryOp::neg, dy, 0);
        break;
      case BinaryOp::mul:
        if (need_a_) da = kernels::binary(BinaryOp::mul, dy, saved(1));
        if (need_b_) db = kernels::binary(BinaryOp::mul, dy, saved(0));
        break;
      case BinaryOp::div: {
        const Tensor& b = saved(1);
        Tensor dy_over_b = kernels::binary(BinaryOp::div, dy, b);
        if (need_b_)  // d(a/b)/db = -a/b^2 = -(dy/b) * (a/b)
          db = kernels::unary(UnaryOp::neg,
                              kernels::binary(BinaryOp::mul, dy_over_b, kernels::binary(BinaryOp::div, saved(0), b)), 0);
        if (need_a_) da = std::move(dy_over_b);
        break;
      }
    }
    if (da.defined()) da = kernels::sum_to(da, a_shape_);
    if (db.defined()) db = kernels::sum_to(db, b_shape_);
    return {da, db};
  }

 private:
  BinaryOp op_;
  Shape a_shape_, b_shape_;
  bool need_a_, need_b_;
};

Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b) {
  Tensor c = kernels::binary(op, a, b);
  if (autograd::any_requires_grad({a, b})) {
    auto node = std::make_shared<BinaryBackward>(op, a.shape(), b.shape(), a.requires_grad(), b.requires_grad());
    if (op == BinaryOp::mul || op == BinaryOp::div) {
      // mul needs both; div needs b always and a only for b's gradient.
      node->save(op == BinaryOp::div && !b.requires_grad() ? Tensor() : a);
      node->save(b);
    }
    autograd::record(c, node, {a, b});
  }
  return c;
}

// a op s, or s op a: gradient wrt a only.
class ScalarBackward final : public autograd::Node {
 public:
  ScalarBackward(BinaryOp op, double s, bool scalar_first) : op_(op), s_(s), scalar_first_(scalar_first) {}
  const char* name() const override { return kernels::binary_op_name(op_); }
  std::vector<Tensor> apply(const Tensor& dy) override {
    switch (op_) {
      case BinaryOp::add: return {dy};
      case BinaryOp::sub: return {scalar_first_ ? kernels::unary(UnaryOp::neg, dy, 0) : dy};
      case BinaryOp::mul: return {kernels::binary_scalar(BinaryOp::mul, dy, s_, false)};
      case BinaryOp::div:
        if (!scalar_first_) return {kernels::binary_scalar(BinaryOp::div, dy, s_, false)};
        // d(s/a)/da = -s/a^2 = -(y / a) where y = s / a
        return {kernels::unary(UnaryOp::neg,
                               kernels::binary(BinaryOp::mul, dy, kernels::binary(BinaryOp::div, saved(1), saved(0))), 0)};
    }
    return {dy};
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
    if (op == BinaryOp::div && scalar_first) {
      node->save(a);
      node->save(c);
    }
    autograd::record(c, node, {a});
  }
  return c;
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
  if (autograd::any_requires_grad({x})) {
    auto node = std::make_shared<UnaryBackward>(op, 0.0);
    if (kernels::unary_saved(op) != kernels::UnarySaved::none) node->save(y);
    autograd::record(y, node, {x});
  }
  x = Tensor();  // a temporary lives to the end of the caller's expression: let go of the bytes now
  return y;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::add, a, b); }
Tensor add(Tensor&& a, const Tensor& b) {
  if (!can_reuse(a) || a.shape() != b.shape() || a.dtype() != b.dtype() || a.device() != b.device())
    return binary_op(BinaryOp::add, a, b);
  kernels::add_(a, b, 1.0);
  Tensor c = a.detach();
  if (autograd::any_requires_grad({a, b})) {
    auto node = std::make_shared<BinaryBackward>(BinaryOp::add, a.shape(), b.shape(), a.requires_grad(),
                                                 b.requires_grad());
    autograd::record(c, node, {a, b});
  }
  a = Tensor();  // so that relu(add(...)) can reuse the bytes in turn
  return c;
}
Tensor sub(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::div, a, b); }
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
