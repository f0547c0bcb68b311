// Reductions: sum, mean, max over everything and along each dim, argmax, mse_loss; softmax
// family, cross entropy and nll_loss.
#include "tests/ops/op_case.h"

namespace ember::test {

std::vector<OpCase> reduce_cases() {
  std::vector<OpCase> cases;
  // One element, a matrix, a 3-D tensor, rows of a bigger one, and more elements than one
  // CUDA block reduces (the order of a million-term sum differs from fp64's: looser there).
  for (const Shape& shape : {Shape{1}, Shape{7, 3}, Shape{4, 5, 6}, Shape{1000003}}) {
    const bool big = shape.numel() > 100000;
    const double f32 = big ? 1e-4 : 1e-5, f16 = big ? 3e-3 : 2e-3;
    const std::string s = " " + shape.str();
    cases.push_back(OpCase("reduce", "sum" + s, {In(shape)}, [](const Inputs& in) { return sum(in[0]); }).tol(f32, f16));
    cases.push_back(OpCase("reduce", "mean" + s, {In(shape)}, [](const Inputs& in) { return mean(in[0]); }).tol(f32, f16));
    cases.push_back(OpCase("reduce", "max" + s, {In(shape)}, [](const Inputs& in) { return max(in[0]); }));
    cases.push_back(OpCase("reduce", "argmax" + s, {In(shape)}, [](const Inputs& in) { return argmax(in[0]); })
                        .no_backward());
    for (int64_t dim = 0; dim < shape.dim(); ++dim) {
      for (bool keepdim : {false, true}) {
        const std::string d = s + " dim " + std::to_string(dim) + (keepdim ? " keepdim" : "");
        cases.push_back(OpCase("reduce", "sum" + d, {In(shape)},
                               [=](const Inputs& in) { return sum(in[0], dim, keepdim); }).tol(f32, f16));
        cases.push_back(OpCase("reduce", "mean" + d, {In(shape)},
                               [=](const Inputs& in) { return mean(in[0], dim, keepdim); }).tol(f32, f16));
        cases.push_back(OpCase("reduce", "max" + d, {In(shape)},
                               [=](const Inputs& in) { return max(in[0], dim, keepdim); }));
        cases.push_back(OpCase("reduce", "argmax" + d, {In(shape)},
                               [=](const Inputs& in) { return argmax(in[0], dim, keepdim); }).no_backward());
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
  cases.push_back(OpCase("reduce", "sum [0]", {In({0})}, [](const Inputs& in) { return sum(in[0]); }));
  cases.push_back(OpCase("reduce", "sum [0, 3] dim 0", {In({0, 3})}, [](const Inputs& in) { return sum(in[0], 0); }));
  cases.push_back(OpCase("reduce", "max [0, 3] dim 1", {In({0, 3})}, [](const Inputs& in) { return max(in[0], 1); }));
  cases.push_back(OpCase("reduce", "sum of rows 1.. of [6, 4] dim 1", {RowsOf({5, 4})},
                         [](const Inputs& in) { return sum(in[0], 1); }));
  // mse_loss: gradients reach both the input and the target.
  for (const Shape& shape : {Shape{1}, Shape{7, 3}, Shape{2, 3, 4}}) {
    cases.push_back(OpCase("reduce", "mse_loss " + shape.str(), {In(shape), In(shape)},
                           [](const Inputs& in) { return mse_loss(in[0], in[1]); }));
  }
  cases.push_back(OpCase("reduce", "mse_loss of rows 1.. of [6, 4] and a constant target", {RowsOf({5, 4}), Constant({5, 4})},
                         [](const Inputs& in) { return mse_loss(in[0], in[1]); }));
  return cases;
}

std::vector<OpCase> softmax_cases() {
  std::vector<OpCase> cases;
  for (const Shape& shape : {Shape{1, 1}, Shape{4, 10}, Shape{3, 4, 5}, Shape{2, 1000}, Shape{0, 7}}) {
    for (int64_t dim = 0; dim < shape.dim(); ++dim) {
      const std::string s = " " + shape.str() + " dim " + std::to_string(dim);
      cases.push_back(OpCase("softmax", "softmax" + s, {In(shape)}, [dim](const Inputs& in) { return softmax(in[0], dim); }));
      cases.push_back(
          OpCase("softmax", "log_softmax" + s, {In(shape)}, [dim](const Inputs& in) { return log_softmax(in[0], dim); }));
    }
  }
  // Huge logits: stable (no inf) because the maximum is subtracted first.
  cases.push_back(OpCase("softmax", "softmax of logits * 1000 [4, 10]", {In({4, 10})},
                         [](const Inputs& in) { return softmax(mul(in[0], 1000.0), 1); })
                      .only({DType::f64, DType::f32}));
  cases.push_back(OpCase("softmax", "log_softmax of rows 1.. of [5, 6]", {RowsOf({4, 6})},
                         [](const Inputs& in) { return log_softmax(in[0], 1); }));
  // Cross entropy: the loss is f32 for f16 logits (mixed precision), labels are checked.
  for (const auto& [n, c] : {std::pair<int64_t, int64_t>{1, 1}, {8, 5}, {64, 10}, {3, 1000}}) {
    const Shape logits{n, c};
    cases.push_back(OpCase("softmax", "cross_entropy " + logits.str(), {In(logits), Labels({n}, c)},
                           [](const Inputs& in) { return cross_entropy(in[0], in[1]); }));
    cases.push_back(OpCase("softmax", "nll_loss " + logits.str(), {In(logits), Labels({n}, c)},
                           [](const Inputs& in) { return nll_loss(in[0], in[1]); }));
    cases.push_back(OpCase("softmax", "nll_loss of log_softmax " + logits.str(), {In(logits), Labels({n}, c)},
                           [](const Inputs& in) { return nll_loss(log_softmax(in[0], 1), in[1]); }));
  }
  return cases;
}

}  // namespace ember::test
