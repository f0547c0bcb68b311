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
  };
}

}  // namespace ember::test
