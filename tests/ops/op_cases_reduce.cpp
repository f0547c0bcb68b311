// Reductions: sum, mean, max over everything and along each dim, argmax, mse_loss; softmax
// family, cross entropy and nll_loss.
#include <algorithm>

#include "tests/ops/op_case.h"

namespace ember::test {

std::vector<OpCase> reduce_cases() {
  std::vector<OpCase> cases;
  // One element, a matrix, a 3-D tensor, and more elements than one CUDA block reduces. A sum
  // or mean's output sums as many terms as the dims it reduces hold; its gradient is w broadcast
  // (divided by the count for a mean).
  for (const Shape& shape : {Shape{1}, Shape{7, 3}, Shape{4, 5, 6}, Shape{1000003}}) {
    const std::string s = " " + shape.str();
    cases.push_back(OpCase("reduce", "sum" + s, {In(shape)}, [](const Inputs& in) { return sum(in[0]); })
                        .sums(shape.numel())
                        .abs_magnitude());
    cases.push_back(OpCase("reduce", "mean" + s, {In(shape)}, [](const Inputs& in) { return mean(in[0]); })
                        .sums(shape.numel())
                        .abs_magnitude());
    cases.push_back(OpCase("reduce", "max" + s, {In(shape)}, [](const Inputs& in) { return max(in[0]); }).exact());
    cases.push_back(OpCase("reduce", "argmax" + s, {In(shape)}, [](const Inputs& in) { return argmax(in[0]); })
                        .no_backward()
                        .exact());
    // Integer sums (comparisons counted, i64 labels) are i64 and exact: whole numbers as u8 and i64.
    for (DType integer : {DType::u8, DType::i64}) {
      cases.push_back(OpCase("reduce", std::string("sum of ") + dtype_name(integer) + s, {In(shape, Values::integers)},
                             [integer](const Inputs& in) { return sum(in[0].to(integer)); })
                          .only({DType::f64})
                          .no_backward()
                          .against_same_dtype()
                          .exact());
      if (shape.dim() >= 2)
        cases.push_back(OpCase("reduce", std::string("sum of ") + dtype_name(integer) + s + " dim 1",
                               {In(shape, Values::integers)},
                               [integer](const Inputs& in) { return sum(in[0].to(integer), 1); })
                            .only({DType::f64})
                            .no_backward()
                            .against_same_dtype()
                            .exact());
    }
    for (int64_t dim = 0; dim < shape.dim(); ++dim) {
      for (bool keepdim : {false, true}) {
        const std::string d = s + " dim " + std::to_string(dim) + (keepdim ? " keepdim" : "");
        const int64_t terms = shape.sizes()[static_cast<size_t>(dim)];
        cases.push_back(OpCase("reduce", "sum" + d, {In(shape)},
                               [=](const Inputs& in) { return sum(in[0], dim, keepdim); })
                            .sums(terms)
                            .abs_magnitude());
        cases.push_back(OpCase("reduce", "mean" + d, {In(shape)},
                               [=](const Inputs& in) { return mean(in[0], dim, keepdim); })
                            .sums(terms)
                            .abs_magnitude());
        cases.push_back(OpCase("reduce", "max" + d, {In(shape)},
                               [=](const Inputs& in) { return max(in[0], dim, keepdim); })
                            .exact());
        cases.push_back(OpCase("reduce", "argmax" + d, {In(shape)},
                               [=](const Inputs& in) { return argmax(in[0], dim, keepdim); })
                            .no_backward()
                            .exact());
      }
    }
  }
  // Ties: whole numbers repeat; the first maximum is the argmax and takes max's gradient.
  for (int64_t dim : {0, 1}) {
    cases.push_back(OpCase("reduce", "argmax with ties [50, 40] dim " + std::to_string(dim), {In({50, 40}, Values::integers)},
                           [dim](const Inputs& in) { return argmax(in[0], dim); })
                        .no_backward());
    cases.push_back(OpCase("reduce", "max with ties [50, 40] dim " + std::to_string(dim), {In({50, 40}, Values::integers)},
                           [dim](const Inputs& in) { return max(mul(in[0], 0.05), dim); }));
  }
  cases.push_back(OpCase("reduce", "argmax with ties [2000]", {In({2000}, Values::integers)},
                         [](const Inputs& in) { return argmax(in[0]); })
                      .no_backward());

  // Empty tensors: sums and means of nothing; reducing an empty dim away keeps the others.
  cases.push_back(OpCase("reduce", "sum [0]", {In({0})}, [](const Inputs& in) { return sum(in[0]); }).exact());
  cases.push_back(OpCase("reduce", "sum [0, 3] dim 0", {In({0, 3})}, [](const Inputs& in) { return sum(in[0], 0); }).exact());
  cases.push_back(OpCase("reduce", "max [0, 3] dim 1", {In({0, 3})}, [](const Inputs& in) { return max(in[0], 1); }).exact());
  cases.push_back(OpCase("reduce", "sum of rows 1.. of [6, 4] dim 1", {RowsOf({5, 4})},
                         [](const Inputs& in) { return sum(in[0], 1); })
                      .sums(4)
                      .abs_magnitude());
  // mse_loss: gradients reach both the input and the target. The loss sums n squares, all >= 0,
  // so the result itself is their magnitude (each difference and square adds a rounding).
  for (const Shape& shape : {Shape{1}, Shape{7, 3}, Shape{2, 3, 4}}) {
    cases.push_back(OpCase("reduce", "mse_loss " + shape.str(), {In(shape), In(shape)},
                           [](const Inputs& in) { return mse_loss(in[0], in[1]); })
                        .sums(shape.numel()));
  }
  cases.push_back(OpCase("reduce", "mse_loss of rows 1.. of [6, 4] and a constant target", {RowsOf({5, 4}), Constant({5, 4})},
                         [](const Inputs& in) { return mse_loss(in[0], in[1]); })
                      .sums(20));
  return cases;
}

namespace {

// The softmax family's gradients cancel: softmax's dx_i = y_i (w_i - sum_j w_j y_j), log_softmax's
// dx_i = w_i - y_i sum_j w_j, with y = softmax(x) along dim. Their magnitudes are those
// expressions with |w|: y_i (|w_i| + sum_j |w_j| y_j) and |w_i| + y_i sum_j |w_j|. The outputs
// keep |result| + 1: softmax's terms are all positive, log_softmax's x_i - max - log(sum) is
// bounded by its result and the log of the row's length.
MagnitudeFn softmax_magnitudes(int64_t dim, bool log) {
  return [dim, log](const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
    if (!w.defined()) return m;
    const Tensor y = softmax(in[0], dim), aw = abs(w);
    m[1] = log ? add(aw, mul(y, sum(aw, dim, true))) : mul(y, add(aw, sum(mul(aw, y), dim, true)));
    return m;
  };
}

}  // namespace

std::vector<OpCase> softmax_cases() {
  std::vector<OpCase> cases;
  for (const Shape& shape : {Shape{1, 1}, Shape{4, 10}, Shape{3, 4, 5}, Shape{2, 1000}, Shape{0, 7}}) {
    for (int64_t dim = 0; dim < shape.dim(); ++dim) {
      const std::string s = " " + shape.str() + " dim " + std::to_string(dim);
      const int64_t row = shape.sizes()[static_cast<size_t>(dim)];
      cases.push_back(OpCase("softmax", "softmax" + s, {In(shape)}, [dim](const Inputs& in) { return softmax(in[0], dim); })
                          .sums(row)
                          .magnitudes(softmax_magnitudes(dim, false)));
      cases.push_back(
          OpCase("softmax", "log_softmax" + s, {In(shape)}, [dim](const Inputs& in) { return log_softmax(in[0], dim); })
              .sums(row)
              .magnitudes(softmax_magnitudes(dim, true)));
    }
  }
  // Huge logits: stable (no inf) because the maximum is subtracted first.
  cases.push_back(OpCase("softmax", "softmax of logits * 1000 [4, 10]", {In({4, 10})},
                         [](const Inputs& in) { return softmax(mul(in[0], 1000.0), 1); })
                      .only({DType::f64, DType::f32})
                      .sums(10));
  cases.push_back(OpCase("softmax", "log_softmax of rows 1.. of [5, 6]", {RowsOf({4, 6})},
                         [](const Inputs& in) { return log_softmax(in[0], 1); })
                      .sums(6)
                      .magnitudes(softmax_magnitudes(1, true)));
  // Cross entropy: the loss is f32 for f16 logits (mixed precision), labels are checked. The loss
  // sums c exponentials per row and n rows' losses, all >= 0, so the result is their magnitude;
  // the gradient (softmax - one hot) w / n is bounded by |w| / n <= |result| + 1. nll_loss only
  // picks and averages: its magnitudes come from |inputs|.
  for (const auto& [n, c] : {std::pair<int64_t, int64_t>{1, 1}, {8, 5}, {64, 10}, {3, 1000}}) {
    const Shape logits{n, c};
    const int64_t terms = std::max(n, c);
    cases.push_back(OpCase("softmax", "cross_entropy " + logits.str(), {In(logits), Labels({n}, c)},
                           [](const Inputs& in) { return cross_entropy(in[0], in[1]); })
                        .sums(terms));
    cases.push_back(OpCase("softmax", "nll_loss " + logits.str(), {In(logits), Labels({n}, c)},
                           [](const Inputs& in) { return nll_loss(in[0], in[1]); })
                        .sums(n)
                        .abs_magnitude());
    cases.push_back(OpCase("softmax", "nll_loss of log_softmax " + logits.str(), {In(logits), Labels({n}, c)},
                           [](const Inputs& in) { return nll_loss(log_softmax(in[0], 1), in[1]); })
                        .sums(terms));
  }
  return cases;
}

}  // namespace ember::test
