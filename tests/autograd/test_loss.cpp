// The losses (autograd/functions/loss.cpp) against hand-computed values, PyTorch's formulas
// worked by hand (or with Python's math for logs and exps): every reduction, the clamps, class
// weights, pos_weight. The op contract (tests/ops) runs them on every device and dtype with gradcheck.
#include <cmath>
#include <initializer_list>

#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

TEST_CASE("mse_loss: mean of squared differences, gradient 2 (input - target) / n", "[loss]") {
  Tensor input = tensor({{1.0, 2.0}, {3.0, 4.0}}).requires_grad_();
  Tensor target = tensor({{0.0, 2.0}, {5.0, 1.0}});
  Tensor loss = mse_loss(input, target);
  expect_values(loss, {(1.0 + 0.0 + 4.0 + 9.0) / 4}, 0, "mse_loss");
  loss.backward();
  expect_values(input.grad(), {0.5, 0.0, -1.0, 1.5}, 0, "mse_loss gradient");
}

TEST_CASE("nll_loss of log_softmax equals cross_entropy, value and gradient", "[loss]") {
  const Tensor logits = randn({6, 4});
  const Tensor labels = tensor({0, 3, 1, 1, 2, 0});
  Tensor a = logits.clone().requires_grad_();
  Tensor b = logits.clone().requires_grad_();
  Tensor nll = nll_loss(log_softmax(a, 1), labels);
  Tensor ce = cross_entropy(b, labels);
  // Each side: log_softmax of a row of 4 (the sum of 4 exps and 9 roundings besides, each of a term
  // below 1 + |lp|: tests/kernels/test_softmax.cpp), then a mean of 6 and its rounding: 1 + the loss
  // is the mean of 1 + |lp|, as the tolerance takes it. Both sides round: twice that.
  expect_close(nll, ce, test::ErrorModel{2 * (4 + 6), 2 * (9 + 2), 0}.tolerance(kFloat32),
               "nll_loss(log_softmax) vs cross_entropy");
  nll.backward();
  ce.backward();
  // Each side: (p - onehot) / 6 from the same log-probabilities (their error a relative one of
  // p = exp(lp)), exp (4 units), 1/6, the subtraction and the product: each of a term of
  // (p (1 + |lp|) + onehot) / 6 < 1 (p |lp| <= 1/e). Twice that.
  expect_close(a.grad(), b.grad(), test::ErrorModel{2 * 4, 2 * (9 + 4 + 3), 0}.tolerance(kFloat32), "their gradients");
}

TEST_CASE("nll_loss picks -log_probs[i, label_i] and averages", "[loss]") {
  Tensor log_probs = tensor({{-0.5, -1.0, -2.0}, {-3.0, -0.25, -1.5}}).requires_grad_();
  Tensor loss = nll_loss(log_probs, tensor({2, 1}));
  expect_values(loss, {(2.0 + 0.25) / 2}, 0, "nll_loss");
  loss.backward();
  expect_values(log_probs.grad(), {0, 0, -0.5, 0, -0.5, 0}, 0, "nll_loss gradient");
}

namespace {
// Hand values (tensor() of decimals is f32): a sum of up to 6 terms and a few roundings of f32
// operations (a library log or exp: 4 units) on terms below 1 + |result| each.
const double kTol = test::ErrorModel{6, 8, 0}.tolerance(kFloat32);
Tensor f64(std::initializer_list<double> v) { return tensor(v).to(kFloat64); }
}  // namespace

TEST_CASE("loss reductions: none gives the terms, sum their sum, mean their mean", "[loss]") {
  // d = input - target = (0.5, -2, -0.5, 2.5, 2, 0.25): PyTorch's formulas term by term.
  const Tensor input = tensor({{0.5, -1.0, 2.0}, {3.0, 0.0, -0.25}});
  const Tensor target = tensor({{0.0, 1.0, 2.5}, {0.5, -2.0, -0.5}});
  expect_values(l1_loss(input, target, Reduction::None), {0.5, 2, 0.5, 2.5, 2, 0.25}, 0, "l1_loss none");
  CHECK(l1_loss(input, target, Reduction::None).shape() == Shape{2, 3});
  expect_values(l1_loss(input, target, Reduction::Sum), {7.75}, kTol, "l1_loss sum");
  expect_values(l1_loss(input, target), {7.75 / 6}, kTol, "l1_loss mean");
  expect_values(mse_loss(input, target, kSum), {0.25 + 4 + 0.25 + 6.25 + 4 + 0.0625}, kTol, "mse_loss sum");
  expect_values(mse_loss(input, target, kNone), {0.25, 4, 0.25, 6.25, 4, 0.0625}, 0, "mse_loss none");
  // smooth_l1 (beta 1): 0.5 d^2 where |d| < 1, else |d| - 0.5; beta 2: 0.25 d^2, else |d| - 1.
  expect_values(smooth_l1_loss(input, target, kNone), {0.125, 1.5, 0.125, 2.0, 1.5, 0.03125}, 0, "smooth_l1 1");
  expect_values(smooth_l1_loss(input, target, kNone, 2.0), {0.0625, 1.0, 0.0625, 1.5, 1.0, 0.015625}, 0,
                "smooth_l1 2");
  expect_values(smooth_l1_loss(input, target, kNone, 0.0), {0.5, 2, 0.5, 2.5, 2, 0.25}, 0, "smooth_l1 0 is l1");
  expect_values(smooth_l1_loss(input, target), {(0.125 + 1.5 + 0.125 + 2.0 + 1.5 + 0.03125) / 6}, kTol,
                "smooth_l1 mean");
  // huber (delta 1) is smooth_l1 (beta 1); delta 2: 0.5 d^2 where |d| < 2, else 2 (|d| - 1).
  expect_values(huber_loss(input, target, kNone), {0.125, 1.5, 0.125, 2.0, 1.5, 0.03125}, 0, "huber 1");
  expect_values(huber_loss(input, target, kNone, 2.0), {0.125, 2.0, 0.125, 3.0, 2.0, 0.03125}, 0, "huber 2");
  expect_values(huber_loss(input, target, kSum, 2.0), {7.28125}, kTol, "huber 2 sum");
}

TEST_CASE("loss gradients: PyTorch's per-term derivatives, reduced", "[loss][gradcheck]") {
  const Tensor target = tensor({{0.0, 1.0, 2.5}, {0.5, -2.0, -0.5}});
  // smooth_l1 (beta 1), mean: d where |d| < 1, else sign(d), over 6.
  Tensor input = tensor({{0.5, -1.0, 2.0}, {3.0, 0.0, -0.25}}).requires_grad_();
  smooth_l1_loss(input, target).backward();
  expect_values(input.grad(), {0.5 / 6, -1.0 / 6, -0.5 / 6, 1.0 / 6, 1.0 / 6, 0.25 / 6}, kTol, "smooth_l1 gradient");
  // huber (delta 2), sum: d where |d| <= 2, else 2 sign(d) (PyTorch's x < -delta, x > delta tests).
  input = tensor({{0.5, -1.0, 2.0}, {3.0, 0.0, -0.25}}).requires_grad_();
  huber_loss(input, target, kSum, 2.0).backward();
  expect_values(input.grad(), {0.5, -2.0, -0.5, 2.0, 2.0, 0.25}, 0, "huber gradient");
  // l1 at d = 0: PyTorch's gradient is 0 (sign(0)).
  input = tensor({1.0, 2.0}).requires_grad_();
  l1_loss(input, tensor({1.0, 0.0}), kSum).backward();
  expect_values(input.grad(), {0.0, 1.0}, 0, "l1 gradient at 0");
  // Smooth away from the kinks: gradcheck, both operands.
  const Tensor a = tensor({{0.3, -1.7, 2.2}, {0.9, -0.4, 1.6}}).to(kFloat64);
  const Tensor b = tensor({{0.1, 0.2, -0.3}, {0.4, 0.5, -0.6}}).to(kFloat64);
  expect_gradcheck([](auto& in) { return smooth_l1_loss(in[0], in[1], kNone, 1.5); }, {a, b}, "smooth_l1_loss");
  expect_gradcheck([](auto& in) { return huber_loss(in[0], in[1], kMean, 0.5); }, {a, b}, "huber_loss");
  expect_gradcheck([](auto& in) { return l1_loss(in[0], in[1], kSum); }, {a, b}, "l1_loss");
}

TEST_CASE("binary_cross_entropy: PyTorch's values, clamps and gradients", "[loss]") {
  // -(t log p + (1 - t) log(1 - p)): -log 0.75, -log 0.5, -(log 0.9 + log 0.1) / 2 (Python's math.log).
  Tensor p = tensor({0.25, 0.5, 0.9}).requires_grad_();
  Tensor t = tensor({0.0, 1.0, 0.5}).requires_grad_();
  expect_values(binary_cross_entropy(p, t, kNone), {0.2876820724517809, 0.6931471805599453, 1.203972804325936},
                kTol, "binary_cross_entropy");
  binary_cross_entropy(p, t, kSum).backward();
  // dp = (p - t) / (p (1 - p)), dt = log(1 - p) - log p.
  expect_values(p.grad(), {4.0 / 3.0, -2.0, 4.444444444444445}, kTol, "binary_cross_entropy dp");
  expect_values(t.grad(), {std::log(0.75) - std::log(0.25), 0.0, std::log(0.1) - std::log(0.9)}, kTol,
                "binary_cross_entropy dt");
  // The logs are clamped at -100, so p = 0 against t = 1 costs 100, not inf; the gradient divides
  // by max(p (1 - p), 1e-12).
  Tensor edge = tensor({0.0, 1.0}).requires_grad_();
  expect_values(binary_cross_entropy(edge, tensor({1.0, 1.0}), kNone), {100.0, 0.0}, 0, "clamped log");
  binary_cross_entropy(edge, tensor({1.0, 1.0}), kSum).backward();
  expect_values(edge.grad(), {-1e12, 0.0}, kTol, "clamped gradient");
  // A weight scales each term.
  expect_values(binary_cross_entropy(tensor({0.5, 0.5}), tensor({1.0, 0.0}), tensor({2.0, 3.0}), kNone),
                {2 * 0.6931471805599453, 3 * 0.6931471805599453}, kTol, "weighted");
  expect_gradcheck([](auto& in) { return binary_cross_entropy(sigmoid(in[0]), sigmoid(in[1])); },
                   {tensor({{0.3, -1.2}, {2.0, 0.1}}).to(kFloat64), tensor({{1.0, -0.5}, {0.2, -2.0}}).to(kFloat64)},
                   "binary_cross_entropy");
}

TEST_CASE("binary_cross_entropy_with_logits: stable, with pos_weight and weight", "[loss]") {
  // (1 - t) x + softplus(-x) with softplus(z) = max(z, 0) + log1p(exp(-|z|)) (Python's math).
  Tensor x = tensor({-3.0, 0.0, 2.5}).requires_grad_();
  const Tensor t = tensor({0.0, 1.0, 0.5});
  expect_values(binary_cross_entropy_with_logits(x, t, kNone),
                {0.048587351573742055, 0.6931471805599453, 1.3288897342925496}, kTol, "with_logits");
  binary_cross_entropy_with_logits(x, t, kSum).backward();
  expect_values(x.grad(), {0.04742587317756678, -0.5, 0.42414181997875655}, kTol, "with_logits dx = sigmoid(x) - t");
  // pos_weight 2: (1 - t) x + (1 + (2 - 1) t) softplus(-x).
  expect_values(binary_cross_entropy_with_logits(x, t, Tensor(), tensor({2.0}), kNone),
                {0.048587351573742055, 1.3862943611198906, 1.3683346014388245}, kTol, "pos_weight");
  expect_values(binary_cross_entropy_with_logits(x, t, tensor({0.5}), Tensor(), kSum),
                {0.5 * (0.048587351573742055 + 0.6931471805599453 + 1.3288897342925496)}, kTol, "weight");
  // No overflow at large logits, in f32: +-100 cost 100 against the wrong target, 0 against the right one.
  const Tensor big = from_vector<float>({100.0f, -100.0f, 100.0f}, {3});
  expect_values(binary_cross_entropy_with_logits(big, from_vector<float>({0.0f, 1.0f, 1.0f}, {3}), kNone),
                {100.0, 100.0, 0.0}, kTol, "large logits");
  const Tensor logits = tensor({{0.3, -1.2}, {2.0, 0.1}}).to(kFloat64);
  const Tensor y = tensor({{1.0, 0.0}, {0.3, 0.8}}).to(kFloat64);
  expect_gradcheck([](auto& in) { return binary_cross_entropy_with_logits(in[0], in[1]); }, {logits, y},
                   "binary_cross_entropy_with_logits");
  expect_gradcheck([](auto& in) { return binary_cross_entropy_with_logits(in[0], in[1], Tensor(), f64({3.0, 0.5})); },
                   {logits, y}, "binary_cross_entropy_with_logits pos_weight");
}

TEST_CASE("nll_loss and cross_entropy: class weights and reductions", "[loss]") {
  // Terms -w[y_i] lp[i, y_i] = (4 * 2, 2 * 0.25); the mean divides by w[2] + w[1] = 6 (PyTorch's).
  Tensor log_probs = tensor({{-0.5, -1.0, -2.0}, {-3.0, -0.25, -1.5}}).requires_grad_();
  const Tensor labels = tensor({2, 1});
  const Tensor w = tensor({1.0, 2.0, 4.0});
  expect_values(nll_loss(log_probs, labels, w, kNone), {8.0, 0.5}, 0, "nll_loss weighted none");
  expect_values(nll_loss(log_probs, labels, w, kSum), {8.5}, 0, "nll_loss weighted sum");
  Tensor loss = nll_loss(log_probs, labels, w);
  expect_values(loss, {8.5 / 6}, kTol, "nll_loss weighted mean");
  loss.backward();
  expect_values(log_probs.grad(), {0, 0, -4.0 / 6, 0, -2.0 / 6, 0}, kTol, "nll_loss weighted gradient");
  // libtorch's MNIST test loss: nll_loss(output, targets, /*weight=*/{}, Reduction::Sum).
  expect_values(nll_loss(log_probs, labels, /*weight=*/{}, Reduction::Sum), {2.25}, 0, "nll_loss sum");
  // cross_entropy's sum and none are n times and the terms of its fused mean.
  const Tensor logits = randn({6, 4}, kFloat64);
  const Tensor y = tensor({0, 3, 1, 1, 2, 0});
  const Tensor mean = cross_entropy(logits, y);
  expect_values(cross_entropy(logits, y, kSum), {6 * mean.item<double>()}, kTol, "cross_entropy sum");
  expect_close(cross_entropy(logits, y, kNone), nll_loss(log_softmax(logits, 1), y, kNone), 0,
               "cross_entropy none");
  expect_gradcheck([&](auto& in) { return cross_entropy(in[0], y, f64({0.5, 1.0, 2.0, 4.0})); }, {logits},
                   "cross_entropy weighted");
}
