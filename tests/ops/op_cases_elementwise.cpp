// Elementwise ops: every op of the unary table, binary ops with broadcasting, scalar forms, casts.
#include <algorithm>

#include "kernels/ops.h"
#include "tests/ops/op_case.h"

namespace ember::test {
namespace {

using kernels::UnaryOp;

// The shapes each unary op runs on: empty, one element, a matrix, rows of a bigger tensor, and
// more elements than one CUDA grid pass (no gradcheck there: too many elements).
const std::vector<Shape> kUnaryShapes = {{0}, {1}, {7, 3}, {1000003}};

Values unary_values(UnaryOp op) {
  switch (op) {
    case UnaryOp::log:
    case UnaryOp::sqrt:
    case UnaryOp::pow: return Values::positive;
    default: return Values::away_from_zero;
  }
}

constexpr double kExponent = 2.5;  // not an integer, so pow's general path runs

// a - b sums the terms of a + b with one sign flipped, so its magnitudes are add's on |a| and |b|
// (the |inputs| run of sub itself would cancel).
std::vector<Tensor> sub_magnitudes(const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
  const Tensor a = abs(in[0]).requires_grad_(true), b = abs(in[1]).requires_grad_(true);
  const Tensor y = add(a, b);
  m[0] = y.detach();
  if (!w.defined()) return m;
  y.backward(abs(w));
  m[1] = a.grad();
  m[2] = b.grad();
  return m;
}

}  // namespace

std::vector<OpCase> elementwise_cases() {
  std::vector<OpCase> cases;
  // Every op of core/unary_ops.def: a new line there is tested on every device with no edit here.
  const std::vector<UnaryOp> unary_ops = {
#define EMBER_UNARY_OP(name, forward, derivative, saves) UnaryOp::name,
#define EMBER_UNARY_OP_PUBLIC EMBER_UNARY_OP
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
  };
  for (UnaryOp op : unary_ops) {
    const std::string name = kernels::unary_op_name(op);
    const OpFn fn = [op](const Inputs& in) { return unary_op(op, in[0], kExponent); };
    for (const Shape& shape : kUnaryShapes)
      cases.push_back(OpCase("elementwise", name + " " + shape.str(), {In(shape, unary_values(op))}, fn));
    cases.push_back(OpCase("elementwise", name + " of rows 1.. of [6, 4]", {RowsOf({5, 4}, unary_values(op))}, fn));
  }

  // Binary ops with NumPy broadcasting, both operand orders; divisors stay away from 0.
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{7}, {7}},       {{2, 3}, {3}},    {{2, 1}, {1, 3}}, {{4, 1, 5}, {3, 1}}, {{}, {5, 7}},
      {{1}, {1}},       {{0, 3}, {3}},    {{1000003}, {1}}, {{1, 1000003}, {3, 1}},
      {{2, 1, 3, 1, 2, 1, 2, 1}, {1, 2, 1, 3, 1, 2, 1, 2}},  // 8 dims: the limit
  };
  const std::vector<std::pair<const char*, OpFn>> binary = {
      {"add", [](const Inputs& in) { return add(in[0], in[1]); }},
      {"sub", [](const Inputs& in) { return sub(in[0], in[1]); }},
      {"mul", [](const Inputs& in) { return mul(in[0], in[1]); }},
      {"div", [](const Inputs& in) { return div(in[0], in[1]); }},
  };
  for (const auto& [a, b] : shapes) {
    // The broadcast operand's gradient sums `terms` per-element gradients (in the dtype, as
    // PyTorch does, then summed in fp32): each term's own rounding costs u of the dtype, the sum
    // gamma(terms); both relative to sum |terms|, which the |inputs| run gives.
    const int64_t out = broadcast_shapes(a, b, "test").numel();
    const int64_t terms = out / std::max<int64_t>(1, std::min(a.numel(), b.numel()));
    for (const auto& [name, fn] : binary) {
      const MagnitudeFn refine = std::string(name) == "sub" ? MagnitudeFn(sub_magnitudes) : MagnitudeFn();
      cases.push_back(OpCase("elementwise", std::string(name) + " " + a.str() + " with " + b.str(),
                             {In(a), In(b, Values::positive)}, fn)
                          .sums(terms)
                          .abs_magnitude()
                          .magnitudes(refine));
      cases.push_back(OpCase("elementwise", std::string(name) + " " + b.str() + " with " + a.str(),
                             {In(b), In(a, Values::positive)}, fn)
                          .sums(terms)
                          .abs_magnitude()
                          .magnitudes(refine));
    }
  }
  cases.push_back(OpCase("elementwise", "mul of rows 1.. of [4, 3] with [3]", {RowsOf({3, 3}), In({3})},
                         [](const Inputs& in) { return mul(in[0], in[1]); }));

  // The scalar forms.
  for (const Shape& shape : {Shape{0}, Shape{1}, Shape{7, 3}, Shape{1000003}}) {
    const std::string s = " " + shape.str();
    cases.push_back(OpCase("elementwise", "add scalar" + s, {In(shape)},
                           [](const Inputs& in) { return add(in[0], 1.75); }));
    cases.push_back(OpCase("elementwise", "mul scalar" + s, {In(shape)},
                           [](const Inputs& in) { return mul(in[0], -1.75); }));
    cases.push_back(OpCase("elementwise", "div by scalar" + s, {In(shape)},
                           [](const Inputs& in) { return div(in[0], 1.75); }));
    cases.push_back(OpCase("elementwise", "scalar minus" + s, {In(shape)},
                           [](const Inputs& in) { return rsub(in[0], 1.75); }));
    cases.push_back(OpCase("elementwise", "scalar over" + s, {In(shape, Values::positive)},
                           [](const Inputs& in) { return rdiv(in[0], 1.75); }));
  }

  // The in-place updates (no gradient: they are for optimizers and accumulation) and fills.
  for (const Shape& shape : {Shape{0}, Shape{1}, Shape{7, 3}, Shape{1000003}}) {
    const std::string s = " " + shape.str();
    cases.push_back(OpCase("elementwise", "add_" + s, {Constant(shape), Constant(shape)},
                           [](const Inputs& in) {
                             Tensor t = in[0].clone();
                             t.add_(in[1], -0.375);
                             return t;
                           })
                        .no_backward());
    cases.push_back(OpCase("elementwise", "mul_" + s, {Constant(shape)},
                           [](const Inputs& in) {
                             Tensor t = in[0].clone();
                             t.mul_(-1.5);
                             return t;
                           })
                        .no_backward());
    cases.push_back(OpCase("elementwise", "full" + s, {Constant({1})},
                           [shape](const Inputs& in) {
                             return full(shape, 3.75, TensorOptions(in[0].dtype()).device(in[0].device()));
                           })
                        .no_backward()
                        .against_same_dtype()
                        .exact());
  }

  // Integer arithmetic (no gradient): exact on every device.
  for (const auto& [name, fn] : binary) {
    if (std::string(name) == "div") continue;
    cases.push_back(OpCase("elementwise", std::string(name) + " i64 [3, 4] with [4]",
                           {In({3, 4}, Values::integers), In({4}, Values::integers)},
                           [fn = fn](const Inputs& in) { return fn({in[0].to(DType::i64), in[1].to(DType::i64)}); })
                        .only({DType::f64})
                        .no_backward()
                        .against_same_dtype()
                        .exact());
  }

  // Casts between every pair of dtypes (whole numbers: exact everywhere) and of fractions to
  // f16 and i64 (rounding, truncation toward zero); differentiable between floating dtypes.
  for (DType to : {DType::f32, DType::f64, DType::f16, DType::i64, DType::u8}) {
    for (DType from : {DType::f32, DType::f64, DType::f16, DType::i64, DType::u8}) {
      cases.push_back(OpCase("elementwise",
                             std::string("cast whole numbers ") + dtype_name(from) + " -> " + dtype_name(to),
                             {In({1003}, Values::integers)},
                             [from, to](const Inputs& in) { return to_dtype(in[0].to(from), to); })
                          .only({DType::f64})
                          .no_backward()
                          .against_same_dtype()
                          .exact());
    }
  }
  // Comparisons (core/compare_ops.def): u8 1 or 0, exact on every device. Whole numbers in
  // [0, 200) tie often, so == and <= meet equal operands; they broadcast like the arithmetic ops,
  // run in every dtype (as i64 and u8 too) and against a number.
  const std::vector<std::pair<const char*, OpFn>> comparisons = {
      {"eq", [](const Inputs& in) { return eq(in[0], in[1]); }}, {"ne", [](const Inputs& in) { return ne(in[0], in[1]); }},
      {"lt", [](const Inputs& in) { return lt(in[0], in[1]); }}, {"le", [](const Inputs& in) { return le(in[0], in[1]); }},
      {"gt", [](const Inputs& in) { return gt(in[0], in[1]); }}, {"ge", [](const Inputs& in) { return ge(in[0], in[1]); }},
  };
  for (const auto& [name, fn] : comparisons) {
    for (const auto& [a, b] : {std::pair<Shape, Shape>{{40, 25}, {40, 25}}, {{40, 25}, {25}}, {{7, 1}, {1, 9}},
                               {{0, 3}, {3}}, {{}, {5}}}) {
      cases.push_back(OpCase("elementwise", std::string(name) + " " + a.str() + " with " + b.str(),
                             {In(a, Values::integers), In(b, Values::integers)}, fn)
                          .no_backward()
                          .exact());
    }
    for (DType integer : {DType::i64, DType::u8}) {
      cases.push_back(OpCase("elementwise", std::string(name) + " " + dtype_name(integer) + " [40, 25] with [25]",
                             {In({40, 25}, Values::integers), In({25}, Values::integers)},
                             [fn = fn, integer](const Inputs& in) { return fn({in[0].to(integer), in[1].to(integer)}); })
                          .only({DType::f64})
                          .no_backward()
                          .against_same_dtype()
                          .exact());
    }
  }
  // More elements than one CUDA grid pass.
  cases.push_back(OpCase("elementwise", "eq [1000003] with [1000003]",
                         {In({1000003}, Values::integers), In({1000003}, Values::integers)},
                         [](const Inputs& in) { return eq(in[0], in[1]); })
                      .no_backward()
                      .exact());
  for (double s : {0.0, 100.0, 100.5}) {
    const std::string v = " " + std::to_string(s).substr(0, 5);
    cases.push_back(OpCase("elementwise", "eq scalar" + v, {In({40, 25}, Values::integers)},
                           [s](const Inputs& in) { return eq(in[0], s); })
                        .no_backward()
                        .exact());
    cases.push_back(OpCase("elementwise", "le scalar" + v, {In({40, 25}, Values::integers)},
                           [s](const Inputs& in) { return le(in[0], s); })
                        .no_backward()
                        .exact());
    cases.push_back(OpCase("elementwise", "gt scalar of i64" + v, {In({40, 25}, Values::integers)},
                           [s](const Inputs& in) { return gt(in[0].to(DType::i64), s); })
                        .only({DType::f64})
                        .no_backward()
                        .against_same_dtype()
                        .exact());
  }
  // NaN is unequal to everything, itself included (log of negatives).
  cases.push_back(OpCase("elementwise", "ne of NaNs [64]", {In({64})},
                         [](const Inputs& in) { return ne(log(in[0]), log(in[0])); })
                      .no_backward()
                      .exact());

  for (DType to : {DType::f16, DType::f32, DType::i64}) {
    OpCase c("elementwise", std::string("cast fractions -> ") + dtype_name(to), {In({1003})},
             [to](const Inputs& in) { return to_dtype(mul(in[0], 50.0), to); });
    c.against_same_dtype().exact();
    if (to == DType::i64) c.no_backward();
    cases.push_back(c);
  }
  return cases;
}

}  // namespace ember::test
