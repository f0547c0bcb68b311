// The CNN layers: Conv2d, BatchNorm2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d,
// Dropout (and Flatten in a stack): output shapes, parameter and buffer names and
// counts, PyTorch's default init, the train/eval switch, and a small CNN that
// trains end to end through every layer's backward.
#include <algorithm>
#include <cmath>
#include <memory>

#include "core/generator.h"
#include "kernels/factories.h"
#include "autograd/node.h"
#include "models/activation.h"
#include "models/batch_norm.h"
#include "models/conv2d.h"
#include "models/dropout.h"
#include "models/flatten.h"
#include "models/linear.h"
#include "models/pooling.h"
#include "models/sequential.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

namespace {

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> out;
  for (const auto& [name, t] : named) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("nn::Conv2d has PyTorch's shapes, names and init bound", "[layers]") {
  manual_seed(31);
  nn::Conv2d conv(nn::Conv2dOptions(3, 8, 5).stride(2).padding(2));
  CHECK(conv.weight().shape() == Shape{8, 3, 5, 5});
  CHECK(conv.bias().shape() == Shape{8});
  CHECK(names_of(conv.named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(conv.num_parameters() == 8 * 3 * 25 + 8);
  // kaiming_uniform(a = sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = 3 * 5 * 5
  const double bound = 1.0 / std::sqrt(75.0);
  const std::vector<double> w = conv.weight().to_vector<double>();
  CHECK(*std::max_element(w.begin(), w.end()) <= bound);
  CHECK(*std::min_element(w.begin(), w.end()) >= -bound);
  CHECK(*std::max_element(w.begin(), w.end()) > 0.8 * bound);  // 600 draws reach the edge of the range
  CHECK(conv.forward(zeros({2, 3, 9, 7})).shape() == Shape{2, 8, 5, 4});

  nn::Conv2d pointwise(nn::Conv2dOptions(4, 2, 1).bias(false));
  CHECK_FALSE(pointwise.bias().defined());
  CHECK(pointwise.parameters().size() == 1);
  const Tensor x = randn({1, 4, 3, 3});
  expect_close(pointwise.forward(x), conv2d(x, pointwise.weight()), 0, "Conv2d forward is conv2d");
  CHECK(nn::Conv2d(nn::Conv2dOptions(1, 1, {3, 1}).dilation({2, 1})).forward(zeros({1, 1, 6, 2})).shape() ==
        Shape{1, 1, 2, 2});
  expect_error_contains([] { nn::Conv2d(0, 4, 3); }, {"Conv2d", "in=0"});
}

TEST_CASE("nn::BatchNorm2d registers weight, bias and running statistics", "[layers]") {
  nn::BatchNorm2d bn(4);
  CHECK(names_of(bn.named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(names_of(bn.named_buffers()) == std::vector<std::string>{"running_mean", "running_var"});
  expect_values(bn.weight(), {1, 1, 1, 1}, 0, "BatchNorm2d weight init");
  expect_values(bn.bias(), {0, 0, 0, 0}, 0, "BatchNorm2d bias init");
  expect_values(bn.running_mean(), {0, 0, 0, 0}, 0, "running_mean init");
  expect_values(bn.running_var(), {1, 1, 1, 1}, 0, "running_var init");
  CHECK(bn.forward(randn({2, 4, 3, 3})).shape() == Shape{2, 4, 3, 3});

  nn::BatchNorm2d plain(nn::BatchNorm2dOptions(4).affine(false).track_running_stats(false));
  CHECK(plain.parameters().empty());
  CHECK(plain.buffers().empty());
  plain.eval();  // no running statistics: eval still normalises with the batch's
  const Tensor x = randn({3, 4, 2, 2}, {}, 5.0, 2.0);
  const Tensor y = plain.forward(x);
  test::expect_within(mean(y.transpose(0, 1).reshape({4, 12}), 1), zeros({4}, kFloat64), test::batch_norm_mean_bound(x),
                      "BatchNorm2d without running stats in eval: channel means");
  expect_error_contains([&] { bn.forward(zeros({2, 4})); }, {"BatchNorm2d", "[N, C, H, W]", "[2, 4]"});
}

TEST_CASE("nn::BatchNorm2d switches between batch and running statistics", "[layers]") {
  manual_seed(32);
  nn::BatchNorm2d bn(2);
  const Tensor x = randn({4, 2, 3, 3}, {}, 3.0, 2.0);
  const Tensor y_train = bn.forward(x);
  // training: batch statistics, so each channel comes out with mean 0
  test::expect_within(mean(y_train.transpose(0, 1).reshape({2, 36}), 1), zeros({2}, kFloat64),
                      test::batch_norm_mean_bound(x), "train-mode channel means");  // weight 1 and bias 0 at init
  const std::vector<double> after_one = bn.running_mean().to_vector<double>();
  CHECK(std::fabs(after_one[0]) > 0.1);  // moved 10% of the way towards ~3
  bn.eval();
  CHECK_FALSE(bn.is_training());
  const Tensor y_eval = bn.forward(x);
  expect_close(y_eval, batch_norm(x, bn.weight(), bn.bias(), bn.running_mean(), bn.running_var(), false), 0,
               "eval uses the running statistics");
  expect_values(bn.running_mean(), after_one, 0, "eval leaves running_mean alone");
  bn.train();
  bn.forward(x);
  CHECK(bn.running_mean().to_vector<double>()[0] != after_one[0]);
}

// Sequential runs a BatchNorm2d with a ReLU after it as batch_norm_relu: the same values and
// gradients as the two layers one by one (forward_range over one layer each), and one autograd
// node instead of two.
TEST_CASE("nn::Sequential fuses a BatchNorm2d and the ReLU after it, exactly", "[layers]") {
  manual_seed(15);
  auto bn = std::make_shared<nn::BatchNorm2d>(3);
  nn::Sequential net{bn, std::make_shared<nn::ReLU>()};
  for (bool training : {true, false}) {
    INFO((training ? "training" : "eval"));
    net.train(training);
    const Tensor x0 = randn({4, 3, 5, 5}), dy = randn({4, 3, 5, 5});
    Tensor grads[2][3], ys[2];
    for (int fused = 0; fused < 2; ++fused) {
      const Tensor mean = bn->running_mean().clone(), var = bn->running_var().clone();
      for (const Tensor& p : net.parameters()) p.set_grad(Tensor());
      const Tensor x = x0.clone().requires_grad_();
      const Tensor y = fused ? net.forward(x) : net.forward_range(net.forward_range(x, 0, 1), 1, 2);
      CHECK(std::string(y.grad_fn()->name()) == (fused ? "batch_norm_relu" : "relu"));
      y.backward(dy);
      ys[fused] = y;
      grads[fused][0] = x.grad();
      grads[fused][1] = bn->weight().grad();
      grads[fused][2] = bn->bias().grad();
      Tensor running_mean = bn->running_mean(), running_var = bn->running_var();  // handles to the buffers
      running_mean.copy_(mean);  // both runs start from the same statistics
      running_var.copy_(var);
    }
    CHECK(ys[0].to_vector<float>() == ys[1].to_vector<float>());
    for (int i = 0; i < 3; ++i) CHECK(grads[0][i].to_vector<float>() == grads[1][i].to_vector<float>());
  }
}

TEST_CASE("nn::Dropout is active in training and the identity in eval", "[layers]") {
  manual_seed(33);
  nn::Dropout drop(0.5);
  CHECK(drop.parameters().empty());
  const Tensor x = ones({1000});
  const std::vector<double> ys = drop.forward(x).to_vector<double>();
  const auto zeros_count = std::count(ys.begin(), ys.end(), 0.0);
  CHECK(zeros_count > 350);  // Binomial(1000, 0.5): mean 500, sd 16
  CHECK(zeros_count < 650);
  drop.eval();
  CHECK(drop.forward(x).is_same(x));
  expect_error_contains([] { nn::Dropout(1.5); }, {"Dropout", "1.5"});
}

TEST_CASE("pooling layers give the expected shapes", "[layers]") {
  const Tensor x = randn({2, 3, 8, 6});
  CHECK(nn::MaxPool2d(2).forward(x).shape() == Shape{2, 3, 4, 3});
  CHECK(nn::MaxPool2d(3, 2, 1).forward(x).shape() == Shape{2, 3, 4, 3});
  CHECK(nn::AvgPool2d(2).forward(x).shape() == Shape{2, 3, 4, 3});
  CHECK(nn::AvgPool2d({2, 3}, 1).forward(x).shape() == Shape{2, 3, 7, 4});
  nn::AdaptiveAvgPool2d gap(1);
  const Tensor g = gap.forward(x);
  CHECK(g.shape() == Shape{2, 3, 1, 1});
  // two means of 48 values (a sum of 48 and a division each), relative to the mean of |x|
  test::expect_within(g.reshape({2, 3}), mean(x.reshape({2, 3, 48}), 2),
                      test::sum_error_bound(2 * 49, kFloat32, mean(abs(x.to(kFloat64)).reshape({2, 3, 48}), 2)),
                      "AdaptiveAvgPool2d(1)");
  CHECK(nn::MaxPool2d(2).parameters().empty());
  expect_error_contains([] { nn::AdaptiveAvgPool2d(2); }, {"AdaptiveAvgPool2d", "(2, 2)"});
}

TEST_CASE("a small CNN with every layer trains end to end", "[layers]") {
  manual_seed(34);
  auto net = std::make_shared<nn::Sequential>();
  net->push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions(1, 4, 3).padding(1)));
  net->push_back(std::make_shared<nn::BatchNorm2d>(4));
  net->push_back(std::make_shared<nn::MaxPool2d>(2));
  net->push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions(4, 6, 3).padding(1)));
  net->push_back(std::make_shared<nn::AvgPool2d>(2));
  net->push_back(std::make_shared<nn::Dropout>(0.1));
  net->push_back(std::make_shared<nn::Flatten>());
  net->push_back(std::make_shared<nn::Linear>(6 * 2 * 2, 3));
  CHECK(names_of(net->named_parameters()) ==
        std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias", "7.weight", "7.bias"});
  CHECK(names_of(net->named_buffers()) == std::vector<std::string>{"1.running_mean", "1.running_var"});
  // Three classes told apart by where the bright pixels are.
  const Tensor x = randn({12, 1, 8, 8}, {}, 0.0, 0.1);
  std::vector<double> pixels = x.to_vector<double>();
  std::vector<int64_t> labels(12);
  for (int64_t n = 0; n < 12; ++n) {
    labels[static_cast<size_t>(n)] = n % 3;
    for (int64_t i = 0; i < 8; ++i) pixels[static_cast<size_t>(n * 64 + (n % 3) * 24 + i)] += 2.0;
  }
  const Tensor images = from_vector<double>(pixels, {12, 1, 8, 8}, kFloat32);
  const Tensor targets = from_vector<int64_t>(labels, {12});
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    net->zero_grad();
    const Tensor loss = cross_entropy(net->forward(images), targets);
    loss.backward();
    for (const Tensor& p : net->parameters()) p.detach().add_(p.grad(), -0.1);
    (step == 0 ? first : last) = loss.item<float>();
  }
  INFO("loss " << first << " -> " << last);
  CHECK(last < 0.3 * first);
  net->eval();
  CHECK(argmax(net->forward(images), 1).to_vector<int64_t>() == labels);
}
