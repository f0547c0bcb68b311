#pragma once
// Per-element math shared by the CPU and CUDA backends. Both call these
// functors, so the two cannot drift apart. T is the compute type: float for
// f32 and f16, double for f64.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/hd.h"
#include "kernels/ops.h"

namespace ember::kernels {

// Calls fn(std::integral_constant<Op, op>{}): the op becomes a compile-time constant
// inside fn, so the per-element switch in the functors below folds away and the
// loop vectorises (a run-time switch per element costs ~10x on the CPU).
template <class Fn>
decltype(auto) with_unary_op(UnaryOp op, Fn&& fn) {
  switch (op) {
#define EMBER_UNARY_OP(name, forward, derivative, saves) \
  case UnaryOp::name: return fn(std::integral_constant<UnaryOp, UnaryOp::name>{});
#define EMBER_UNARY_OP_PUBLIC EMBER_UNARY_OP
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
  }
  return fn(std::integral_constant<UnaryOp, UnaryOp::neg>{});
}

template <class Fn>
decltype(auto) with_binary_op(BinaryOp op, Fn&& fn) {
  switch (op) {
#define EMBER_BINARY_OP(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads) \
  case BinaryOp::name: return fn(std::integral_constant<BinaryOp, BinaryOp::name>{});
#define EMBER_BINARY_OP_PUBLIC EMBER_BINARY_OP
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP_PUBLIC
#undef EMBER_BINARY_OP
  }
  return fn(std::integral_constant<BinaryOp, BinaryOp::add>{});
}

template <class Fn>
decltype(auto) with_compare_op(CompareOp op, Fn&& fn) {
  switch (op) {
#define EMBER_COMPARE_OP(name, forward) \
  case CompareOp::name: return fn(std::integral_constant<CompareOp, CompareOp::name>{});
#include "core/compare_ops.def"
#undef EMBER_COMPARE_OP
  }
  return fn(std::integral_constant<CompareOp, CompareOp::eq>{});
}

namespace math {
#if defined(__CUDA_ARCH__)
template <class T> EMBER_HD T exp(T x) { return ::exp(x); }
template <class T> EMBER_HD T log(T x) { return ::log(x); }
template <class T> EMBER_HD T sqrt(T x) { return ::sqrt(x); }
template <class T> EMBER_HD T tanh(T x) { return ::tanh(x); }
template <class T> EMBER_HD T pow(T x, T e) { return ::pow(x, e); }
template <class T> EMBER_HD T abs(T x) { return ::fabs(x); }
template <class T> EMBER_HD T erf(T x) { return ::erf(x); }
template <class T> EMBER_HD T log1p(T x) { return ::log1p(x); }
#else
template <class T> EMBER_HD T exp(T x) { return std::exp(x); }
template <class T> EMBER_HD T log(T x) { return std::log(x); }
template <class T> EMBER_HD T sqrt(T x) { return std::sqrt(x); }
template <class T> EMBER_HD T tanh(T x) { return std::tanh(x); }
template <class T> EMBER_HD T pow(T x, T e) { return std::pow(x, e); }
template <class T> EMBER_HD T abs(T x) { return std::fabs(x); }
template <class T> EMBER_HD T erf(T x) { return std::erf(x); }
template <class T> EMBER_HD T log1p(T x) { return std::log1p(x); }
#endif
// The larger of a and b (b when either is NaN: callers put the value that may be NaN first).
template <class T> EMBER_HD T max(T a, T b) { return a > b ? a : b; }
// log(x), but at least `floor` (PyTorch's binary_cross_entropy clamps its logs at -100); NaN stays NaN.
template <class T> EMBER_HD T log_at_least(T x, T floor) {
  const T l = log(x);
  return l < floor ? floor : l;
}
// 1 / (1 + exp(-x)), through exp(x) / (1 + exp(x)) below 0 so that neither side overflows.
template <class T> EMBER_HD T sigmoid(T x) {
  return x >= T(0) ? T(1) / (T(1) + exp(-x)) : exp(x) / (T(1) + exp(x));
}
// log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)).
template <class T> EMBER_HD T softplus(T x) { return (x > T(0) ? x : T(0)) + log1p(exp(-abs(x))); }
}  // namespace math

// y = op(x), the forward column of core/unary_ops.def (s: the op's scalar argument).
template <class T>
EMBER_HD T unary_forward(UnaryOp op, T x, T s) {
  (void)s;
  switch (op) {
#define EMBER_UNARY_OP(name, forward, derivative, saves) \
  case UnaryOp::name: return forward;
#define EMBER_UNARY_OP_PUBLIC EMBER_UNARY_OP
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
  }
  return x;
}

// dx from x, y = op(x) and dy, the derivative column; autograd saves only what
// unary_saved() names, and passes a same-shaped stand-in for the other.
template <class T>
EMBER_HD T unary_backward(UnaryOp op, T x, T y, T dy, T s) {
  (void)x, (void)y, (void)s;
  switch (op) {
#define EMBER_UNARY_OP(name, forward, derivative, saves) \
  case UnaryOp::name: return derivative;
#define EMBER_UNARY_OP_PUBLIC EMBER_UNARY_OP
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
  }
  return dy;
}

enum class UnarySaved : uint8_t { none, input, output };

// What the derivative reads, the saves column.
EMBER_HD UnarySaved unary_saved(UnaryOp op) {
  switch (op) {
#define EMBER_UNARY_OP(name, forward, derivative, saves) \
  case UnaryOp::name: return UnarySaved::saves;
#define EMBER_UNARY_OP_PUBLIC EMBER_UNARY_OP
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
  }
  return UnarySaved::input;
}
EMBER_HD bool unary_backward_needs_input(UnaryOp op) { return unary_saved(op) == UnarySaved::input; }

// c = a op b, the forward column of core/binary_ops.def.
template <class T>
EMBER_HD T binary_forward(BinaryOp op, T a, T b) {
  switch (op) {
#define EMBER_BINARY_OP(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads) \
  case BinaryOp::name: return forward;
#define EMBER_BINARY_OP_PUBLIC EMBER_BINARY_OP
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP_PUBLIC
#undef EMBER_BINARY_OP
  }
  return a;
}

// The gradient of a (wrt_b false) or b from a, b and dy: the grad_a / grad_b columns.
template <class T>
EMBER_HD T binary_grad(BinaryOp op, bool wrt_b, T a, T b, T dy) {
  (void)a, (void)b;
  switch (op) {
#define EMBER_BINARY_OP(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads) \
  case BinaryOp::name: return wrt_b ? (grad_b) : (grad_a);
#define EMBER_BINARY_OP_PUBLIC EMBER_BINARY_OP
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP_PUBLIC
#undef EMBER_BINARY_OP
  }
  return dy;
}

// a op b, the forward column of core/compare_ops.def, as the u8 the result stores.
template <class T>
EMBER_HD uint8_t compare_forward(CompareOp op, T a, T b) {
  switch (op) {
#define EMBER_COMPARE_OP(name, forward) \
  case CompareOp::name: return (forward) ? 1 : 0;
#include "core/compare_ops.def"
#undef EMBER_COMPARE_OP
  }
  return 0;
}

// What a op s compares in (kernels/ops.h's compare_scalar): the compute type for a floating T, double
// for an integer one; and s as it is compared: rounded to the floating dtype (through float for
// f16, as its conversions go), exact in double for integers. Host code: both backends pass the
// value to their loops.
template <class T>
using compare_scalar_t = std::conditional_t<std::is_integral_v<T>, double, compute_t<T>>;
template <class T>
compare_scalar_t<T> compare_scalar_value(double s) {
  if constexpr (std::is_same_v<T, Half>) return compare_scalar_t<T>(Half(static_cast<float>(s)));
  else if constexpr (std::is_integral_v<T>) return s;
  else return compare_scalar_t<T>(T(s));
}

enum class BinaryReads : uint8_t { none, a, b, ab };

// Which operands a gradient formula reads: the grad_*_reads columns.
inline BinaryReads binary_grad_reads(BinaryOp op, bool wrt_b) {
  switch (op) {
#define EMBER_BINARY_OP(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads) \
  case BinaryOp::name: return wrt_b ? BinaryReads::grad_b_reads : BinaryReads::grad_a_reads;
#define EMBER_BINARY_OP_PUBLIC EMBER_BINARY_OP
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP_PUBLIC
#undef EMBER_BINARY_OP
  }
  return BinaryReads::ab;
}
inline bool binary_grad_reads_a(BinaryOp op, bool wrt_b) {
  const BinaryReads r = binary_grad_reads(op, wrt_b);
  return r == BinaryReads::a || r == BinaryReads::ab;
}
inline bool binary_grad_reads_b(BinaryOp op, bool wrt_b) {
  const BinaryReads r = binary_grad_reads(op, wrt_b);
  return r == BinaryReads::b || r == BinaryReads::ab;
}
// A formula that reads neither operand is dy times a constant: that constant.
inline double binary_grad_factor(BinaryOp op, bool wrt_b) { return binary_grad<double>(op, wrt_b, 0.0, 0.0, 1.0); }

// PyTorch's SGD for one element; returns the new parameter and updates *buf.
template <class T>
EMBER_HD T sgd_update(T p, T g, T* buf, T lr, T momentum, T dampening, T weight_decay, bool nesterov,
                      bool first_step) {
  if (weight_decay != T(0)) g += weight_decay * p;
  if (momentum != T(0)) {
    const T b = first_step ? g : momentum * *buf + (T(1) - dampening) * g;
    *buf = b;
    g = nesterov ? g + momentum * b : b;
  }
  return p - lr * g;
}

// Mixed precision: one element of a (loss-scaled) gradient into its fp32 master
// gradient. The result is float whatever the gradient's dtype; *nonfinite becomes
// true when the unscaled value is inf or NaN (the caller then skips the step).
template <class G>
EMBER_HD float unscale_grad(G g, float inv_scale, float master, bool accumulate, bool* nonfinite) {
  const float v = static_cast<float>(g) * inv_scale;
  if (!(v - v == 0.0f)) *nonfinite = true;  // inf - inf and NaN - NaN are NaN; finite - itself is 0
  return accumulate ? master + v : v;
}

// Adam/AdamW constants for one step in the compute type T. The per-step scalars (bias
// corrections, 1 - beta, 1 - lr*wd) are computed on the host in double, as PyTorch does in Python.
template <class T>
struct AdamCoefficients {
  T l2;          // Adam: added to the gradient as l2 * p; 0 for AdamW
  T decay;       // AdamW: p *= decay = 1 - lr * weight_decay; 1 for Adam
  T beta1, one_minus_beta1, beta2, one_minus_beta2, eps;
  T step_size;   // lr / (1 - beta1^step)
  T bias_correction2_sqrt;  // sqrt(1 - beta2^step)
};

template <class T>
inline AdamCoefficients<T> adam_coefficients(const AdamOptions& o, int64_t step) {
  const double steps = static_cast<double>(step);
  AdamCoefficients<T> c;
  c.l2 = T(o.decoupled ? 0.0 : o.weight_decay);
  c.decay = T(o.decoupled ? 1.0 - o.lr * o.weight_decay : 1.0);
  c.beta1 = T(o.beta1);
  c.one_minus_beta1 = T(1.0 - o.beta1);
  c.beta2 = T(o.beta2);
  c.one_minus_beta2 = T(1.0 - o.beta2);
  c.eps = T(o.eps);
  c.step_size = T(o.lr / (1.0 - std::pow(o.beta1, steps)));
  c.bias_correction2_sqrt = T(std::sqrt(1.0 - std::pow(o.beta2, steps)));
  return c;
}

// PyTorch's Adam/AdamW for one element; returns the new parameter and updates the moments *m and *v.
template <class T>
EMBER_HD T adam_update(T p, T g, T* m, T* v, const AdamCoefficients<T>& c) {
  if (c.decay != T(1)) p *= c.decay;
  if (c.l2 != T(0)) g += c.l2 * p;
  const T m_new = c.beta1 * *m + c.one_minus_beta1 * g;
  const T v_new = c.beta2 * *v + c.one_minus_beta2 * g * g;
  *m = m_new;
  *v = v_new;
  return p - c.step_size * m_new / (math::sqrt(v_new) / c.bias_correction2_sqrt + c.eps);
}

}  // namespace ember::kernels
