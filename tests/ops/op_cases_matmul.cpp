// matmul (2-D, batched, shared right operand, empty and K = 0), linear, transpose, reshape.
#include <algorithm>

#include "kernels/ops.h"
#include "tests/ops/op_case.h"

namespace ember::test {
namespace {

// The longest sum in a b and its backward: K for y, N for da, the rows of a (all batches for a
// shared right operand) for db.
int64_t longest_matmul_sum(const Shape& a, const Shape& b) {
  const std::vector<int64_t>& as = a.sizes();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < as.size(); ++i) rows *= as[i];
  return std::max({rows, as.back(), b.sizes().back()});
}

}  // namespace

std::vector<OpCase> matmul_cases() {
  std::vector<OpCase> cases;
  // y = a b sums K products; the gradients da = w b^T and db = a^T w sum N and M (the rows of
  // every batch for a shared right operand). f16 outputs are rounded once after fp32
  // accumulation; the magnitudes come from |a| |b| and |w|.
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{1, 1}, {1, 1}},          {{3, 4}, {4, 5}},         {{37, 53}, {53, 29}},   {{64, 65}, {65, 66}},
      {{2, 5, 7}, {2, 7, 3}},    {{3, 37, 53}, {53, 29}},  {{0, 4}, {4, 5}},       {{3, 0}, {0, 5}},
      {{2, 0, 4}, {4, 3}},
  };
  for (const auto& [a, b] : shapes)
    cases.push_back(OpCase("matmul", "matmul " + a.str() + " x " + b.str(), {In(a), In(b)},
                           [](const Inputs& in) { return matmul(in[0], in[1]); })
                        .sums(longest_matmul_sum(a, b))
                        .abs_magnitude());
  // mm: libtorch's 2-D product, the same GEMM.
  for (const auto& [a, b] : {std::pair<Shape, Shape>{{37, 53}, {53, 29}}, {{3, 0}, {0, 5}}})
    cases.push_back(OpCase("matmul", "mm " + a.str() + " x " + b.str(), {In(a), In(b)},
                           [](const Inputs& in) { return in[0].mm(in[1]); })
                        .sums(longest_matmul_sum(a, b))
                        .abs_magnitude());
  cases.push_back(OpCase("matmul", "matmul of rows 1.. of [5, 4] x [4, 3]", {RowsOf({4, 4}), In({4, 3})},
                         [](const Inputs& in) { return matmul(in[0], in[1]); })
                      .sums(4)
                      .abs_magnitude());
  // The kernel's transpose flags (autograd's backward uses them; checked here one by one).
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Shape a = ta ? Shape{53, 37} : Shape{37, 53}, b = tb ? Shape{29, 53} : Shape{53, 29};
      cases.push_back(OpCase("matmul", std::string("kernels::matmul ") + (ta ? "A^T " : "A ") + (tb ? "B^T " : "B ") +
                                           a.str() + " " + b.str(),
                             {Constant(a), Constant(b)},
                             [ta, tb](const Inputs& in) { return kernels::matmul(in[0], in[1], ta, tb); })
                          .no_backward()
                          .sums(53)
                          .abs_magnitude());
      cases.push_back(OpCase("matmul", std::string("kernels::matmul batched ") + (ta ? "A^T " : "A ") + (tb ? "B^T" : "B"),
                             {Constant(ta ? Shape{3, 9, 7} : Shape{3, 7, 9}), Constant(tb ? Shape{3, 5, 9} : Shape{3, 9, 5})},
                             [ta, tb](const Inputs& in) { return kernels::matmul(in[0], in[1], ta, tb); })
                          .no_backward()
                          .sums(9)
                          .abs_magnitude());
    }
  }
  // A small MLP, forward and backward: what a training step asks of the device. Its longest sum
  // has 32 terms (the second layer's dot products, the input's gradient). Not a sum of products
  // (relu, softmax), so the magnitudes are of_result's; but the softmax turns an absolute error of
  // a logit into a relative error of every probability and so of every gradient, and the f16
  // run's roundings of the 32 hidden values move a logit by up to 32 u of its terms: 32 stored
  // roundings, and 2 for the layer outputs and gradients themselves.
  cases.push_back(OpCase("matmul", "mlp: linear, relu, linear, cross_entropy on [16, 20]",
                         {In({16, 20}), In({32, 20}), In({32}), In({10, 32}), In({10}), Labels({16}, 10)},
                         [](const Inputs& in) {
                           return cross_entropy(linear(relu(linear(in[0], in[1], in[2])), in[3], in[4]), in[5]);
                         })
                      .sums(32)
                      .stored(34)
                      .no_gradcheck());
  cases.push_back(OpCase("matmul", "linear [6, 20] by [7, 20] + [7]", {In({6, 20}), In({7, 20}), In({7})},
                         [](const Inputs& in) { return linear(in[0], in[1], in[2]); })
                      .sums(20)
                      .stored(3)
                      .abs_magnitude());
  cases.push_back(OpCase("matmul", "linear [2, 3, 20] by [7, 20], no bias", {In({2, 3, 20}), In({7, 20})},
                         [](const Inputs& in) { return linear(in[0], in[1]); })
                      .sums(20)
                      .abs_magnitude());
  for (const Shape& shape : {Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 3, 4, 5}, Shape{0, 3}, Shape{1, 1}}) {
    for (int64_t d0 = 0; d0 < shape.dim(); ++d0)
      for (int64_t d1 = d0 + 1; d1 < shape.dim(); ++d1)
        cases.push_back(OpCase("matmul", "transpose " + shape.str() + " " + std::to_string(d0) + " " + std::to_string(d1),
                               {In(shape)}, [=](const Inputs& in) { return transpose(in[0], d0, d1); })
                            .exact());
  }
  cases.push_back(OpCase("matmul", "reshape [2, 3, 4] -> [6, -1]", {In({2, 3, 4})},
                         [](const Inputs& in) { return mul(reshape(in[0], {6, -1}), 2.0); })
                      .exact());
  return cases;
}

}  // namespace ember::test
