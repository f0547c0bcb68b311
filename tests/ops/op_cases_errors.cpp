// Inputs every backend must refuse, with an error that names the op and what is wrong.
#include "kernels/ops.h"
#include "tests/ops/op_case.h"

namespace ember::test {
namespace {
TensorOptions on(Device d, DType dtype = DType::f32) { return TensorOptions(dtype).device(d); }
Tensor labels(const std::vector<int64_t>& v, Device d) { return from_vector<int64_t>(v, {int64_t(v.size())}).to(d); }
}  // namespace

std::vector<ErrorCase> error_cases() {
  return {
      {"elementwise", "add of shapes that do not broadcast",
       [](Device d) { add(zeros({2, 3}, on(d)), zeros({4}, on(d))); }, {"add", "[2, 3]", "[4]"}},
      {"elementwise", "binary op past the 8-dim limit",
       [](Device d) {
         kernels::binary(kernels::BinaryOp::add, zeros({2, 1, 1, 1, 1, 1, 1, 1, 1}, on(d)),
                         zeros({1, 2, 1, 1, 1, 1, 1, 1, 1}, on(d)));
       },
       {"add", "at most 8 dims", "got 9"}},
      {"elementwise", "unary op of an integer tensor", [](Device d) { exp(zeros({3}, on(d, DType::i64))); },
       {"exp", "i64"}},
      {"elementwise", "eq of different dtypes",
       [](Device d) { eq(zeros({3}, on(d, DType::i64)), zeros({3}, on(d))); }, {"eq", "i64", "f32"}},
      {"elementwise", "lt of shapes that do not broadcast",
       [](Device d) { lt(zeros({2, 3}, on(d)), zeros({4}, on(d))); }, {"lt", "[2, 3]", "[4]"}},
      {"reduce", "mean of an integer tensor", [](Device d) { mean(zeros({3}, on(d, DType::u8))); }, {"mean", "u8"}},
      {"reduce", "max of an empty tensor", [](Device d) { max(zeros({0}, on(d))); }, {"max", "empty"}},
      {"reduce", "max over an empty dim", [](Device d) { max(zeros({2, 0, 3}, on(d)), 1); }, {"max", "empty"}},
      {"reduce", "scatter_dim with an index out of range",
       [](Device d) {
         kernels::scatter_dim(ones({2, 1}, on(d)), labels({0, 3}, d).reshape({2, 1}), {2, 3}, 1);
       },
       {"scatter_dim", "index 3", "at [1, 0]", "dim 1 of [2, 3]", "0 <= index < 3"}},
      {"softmax", "softmax along a dim x does not have", [](Device d) { softmax(zeros({2, 3}, on(d)), 2); },
       {"softmax", "dim 2", "[2, 3]"}},
      {"softmax", "cross_entropy with a label past the classes",
       [](Device d) { cross_entropy(zeros({3, 4}, on(d)), labels({0, 4, 1}, d)); },
       {"cross_entropy", "sample 1", "label 4", "4 classes"}},
      {"softmax", "cross_entropy with a negative label",
       [](Device d) { cross_entropy(zeros({3, 4}, on(d)), labels({0, 1, -1}, d)); },
       {"cross_entropy", "sample 2", "label -1"}},
      {"softmax", "cross_entropy_backward with a label past the classes",
       [](Device d) {
         Tensor log_probs;
         kernels::cross_entropy(zeros({3, 3}, on(d)), labels({0, 1, 2}, d), &log_probs);
         kernels::cross_entropy_backward(log_probs, labels({0, 5, 1}, d), scalar_tensor(1.0, on(d)));
       },
       {"cross_entropy_backward", "label 5", "3 classes"}},
      {"softmax", "cross_entropy with labels of the wrong length",
       [](Device d) { cross_entropy(zeros({3, 4}, on(d)), labels({0, 1}, d)); }, {"cross_entropy", "[3, 4]", "[2]"}},
      {"softmax", "nll_loss with a label past the classes",
       [](Device d) { nll_loss(zeros({3, 4}, on(d)), labels({0, 4, 1}, d)); },
       {"nll_loss", "sample 1", "label 4", "4 classes"}},
      {"softmax", "nll_loss with labels of the wrong length",
       [](Device d) { nll_loss(zeros({3, 4}, on(d)), labels({0, 1}, d)); }, {"nll_loss", "[3, 4]", "[2]"}},
      {"reduce", "mse_loss of different shapes", [](Device d) { mse_loss(zeros({2, 3}, on(d)), zeros({3, 2}, on(d))); },
       {"mse_loss", "[2, 3]", "[3, 2]"}},
      {"loss", "l1_loss of different shapes", [](Device d) { l1_loss(zeros({2, 3}, on(d)), zeros({3}, on(d))); },
       {"l1_loss", "[2, 3]", "[3]"}},
      {"loss", "smooth_l1_loss with a negative beta",
       [](Device d) { smooth_l1_loss(zeros({2}, on(d)), zeros({2}, on(d)), Reduction::Mean, -1.0); },
       {"smooth_l1_loss", "beta", "-1"}},
      {"loss", "huber_loss with delta 0",
       [](Device d) { huber_loss(zeros({2}, on(d)), zeros({2}, on(d)), Reduction::Sum, 0.0); },
       {"huber_loss", "delta", "0"}},
      {"loss", "binary_cross_entropy of integer targets",
       [](Device d) { binary_cross_entropy(zeros({2}, on(d)), zeros({2}, on(d, DType::i64))); },
       {"binary_cross_entropy", "f32", "i64"}},
      {"loss", "nll_loss with a weight per class of the wrong size",
       [](Device d) { nll_loss(zeros({3, 4}, on(d)), labels({0, 1, 2}, d), ones({3}, on(d)), Reduction::Sum); },
       {"nll_loss", "[4]", "[3]", "[3, 4]"}},
      {"loss", "cross_entropy summed with a label past the classes",
       [](Device d) { cross_entropy(zeros({3, 4}, on(d)), labels({0, 4, 1}, d), Reduction::Sum); },
       {"cross_entropy", "label 4", "4 classes"}},
      {"matmul", "matmul of mismatched inner sizes", [](Device d) { matmul(zeros({2, 3}, on(d)), zeros({4, 5}, on(d))); },
       {"matmul", "[2, 3]", "[4, 5]"}},
      {"cnn", "conv2d with mismatched channels",
       [](Device d) { conv2d(zeros({1, 3, 5, 5}, on(d)), zeros({2, 4, 3, 3}, on(d))); },
       {"conv2d", "[1, 3, 5, 5]", "[2, 4, 3, 3]"}},
      {"cnn", "max_pool2d_backward with a gradient that does not pool x",
       [](Device d) {
         kernels::Pool2dArgs args;
         args.kernel = 2;
         args.stride = 2;
         kernels::max_pool2d_backward(ones({1, 2, 3, 2}, on(d)), zeros({1, 2, 4, 4}, on(d)), args);
       },
       {"max_pool2d_backward", "[1, 2, 3, 2]", "[1, 2, 2, 2]"}},
      {"shape", "narrow past the end of its dim", [](Device d) { narrow(zeros({2, 6}, on(d)), 1, 5, 3); },
       {"narrow: start 5 + length 3 exceeds size 6 of dim 1 of [2, 6]"}},
      {"shape", "narrow with a start before the beginning", [](Device d) { narrow(zeros({2, 6}, on(d)), -1, -7, 1); },
       {"narrow", "start -7", "size 6 of dim 1 of [2, 6]", "-6..6"}},
      {"shape", "narrow with a negative length", [](Device d) { narrow(zeros({2, 6}, on(d)), 0, 0, -1); },
       {"narrow", "length", "-1"}},
      {"shape", "narrow along a dim x does not have", [](Device d) { narrow(zeros({2, 6}, on(d)), 2, 0, 1); },
       {"narrow", "dim 2", "[2, 6]", "-2..1"}},
      {"shape", "narrow of a 0-d tensor", [](Device d) { narrow(zeros({}, on(d)), 0, 0, 1); }, {"narrow", "0-dim"}},
      {"shape", "operator[] past the end", [](Device d) { zeros({2, 3}, on(d))[2]; },
       {"operator[]", "index 2", "size 2 of dim 0 of [2, 3]", "-2..1"}},
      {"shape", "operator[] of a 0-d tensor", [](Device d) { zeros({}, on(d))[0]; }, {"operator[]", "0-dim"}},
      {"matmul", "mm of a batch", [](Device d) { mm(zeros({2, 3, 4}, on(d)), zeros({4, 5}, on(d))); },
       {"mm", "2-D", "[2, 3, 4]", "[4, 5]"}},
      {"matmul", "mm of mismatched inner sizes", [](Device d) { zeros({2, 3}, on(d)).mm(zeros({4, 5}, on(d))); },
       {"mm", "[2, 3]", "[4, 5]", "3 columns against 4 rows"}},
      {"cnn", "max_pool2d with a dilation", [](Device d) { max_pool2d(zeros({1, 1, 4, 4}, on(d)), 2, 2, 0, 2); },
       {"max_pool2d", "dilation (2, 2)", "[1, 1, 4, 4]"}},
      {"cnn", "dropout2d of a 2-d tensor", [](Device d) { dropout2d(zeros({3, 4}, on(d)), 0.5, true); },
       {"dropout2d", "[N, C, H, W]", "[3, 4]"}},
      {"cnn", "feature_dropout of a 1-d tensor", [](Device d) { feature_dropout(zeros({4}, on(d)), 0.5, true); },
       {"feature_dropout", "at least 2 dims", "[4]"}},
      {"shape", "select past the end of its dim", [](Device d) { select(zeros({2, 3}, on(d)), 1, 3); },
       {"select", "index 3", "size 3 of dim 1 of [2, 3]", "-3..2"}},
      {"shape", "select with a negative index past the beginning", [](Device d) { select(zeros({2, 3}, on(d)), -2, -3); },
       {"select", "index -3", "size 2 of dim 0 of [2, 3]"}},
      {"shape", "slice with step 0", [](Device d) { slice(zeros({4, 5}, on(d)), 1, 0, 5, 0); },
       {"slice", "step", "0", "[4, 5]"}},
      {"shape", "slice along a dim x does not have", [](Device d) { slice(zeros({4, 5}, on(d)), -3); },
       {"slice", "dim -3", "[4, 5]"}},
      {"shape", "unsqueeze past the last new position", [](Device d) { unsqueeze(zeros({2, 3}, on(d)), 3); },
       {"unsqueeze", "dim 3", "[2, 3]", "-3..2"}},
      {"shape", "squeeze along a dim x does not have", [](Device d) { squeeze(zeros({1, 3}, on(d)), -3); },
       {"squeeze", "dim -3", "[1, 3]"}},
      {"shape", "permute with too few dims", [](Device d) { permute(zeros({2, 3, 4}, on(d)), {1, 0}); },
       {"permute", "2 dims", "[2, 3, 4]"}},
      {"shape", "permute with a repeated dim", [](Device d) { permute(zeros({2, 3, 4}, on(d)), {0, 2, -1}); },
       {"permute", "dim -1", "twice", "[2, 3, 4]"}},
      {"shape", "permute with a dim x does not have", [](Device d) { permute(zeros({2, 3}, on(d)), {0, 2}); },
       {"permute", "dim 2", "[2, 3]"}},
      {"shape", "cat of sizes that differ outside dim",
       [](Device d) { cat({zeros({2, 3}, on(d)), zeros({2, 4}, on(d))}, 0); },
       {"cat", "except in dim 0", "tensor 1 is [2, 4]", "tensor 0 is [2, 3]"}},
      {"shape", "cat of different ranks", [](Device d) { cat({zeros({2, 3}, on(d)), zeros({2, 3, 1}, on(d))}, 1); },
       {"cat", "tensor 1 is [2, 3, 1]", "tensor 0 is [2, 3]"}},
      {"shape", "cat of different dtypes",
       [](Device d) { cat({zeros({2, 3}, on(d)), zeros({2, 3}, on(d, DType::f64))}, 0); },
       {"cat", "tensor 1 is f64", "tensor 0 is f32"}},
      {"shape", "cat along a dim the tensors do not have",
       [](Device d) { cat({zeros({2, 3}, on(d)), zeros({2, 3}, on(d))}, 2); }, {"cat", "dim 2", "[2, 3]"}},
      {"shape", "cat of a 0-d tensor", [](Device d) { cat({zeros({2}, on(d)), zeros({}, on(d))}); },
       {"cat", "tensor 1", "zero-dimensional"}},
      {"shape", "cat of nothing", [](Device) { cat({}); }, {"cat", "non-empty"}},
      {"shape", "stack of different shapes", [](Device d) { stack({zeros({2, 3}, on(d)), zeros({3, 2}, on(d))}); },
       {"stack", "tensor 1 is [3, 2]", "tensor 0 is [2, 3]"}},
      {"shape", "stack along a dim past the new one", [](Device d) { stack({zeros({2, 3}, on(d))}, -4); },
       {"stack", "dim -4", "[2, 3]", "-3..2"}},
  };
}

}  // namespace ember::test
