// mse_loss and nll_loss (autograd/functions/loss.cpp) against hand-computed values; the op
// contract (tests/ops) runs them on every device and dtype with gradcheck.
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
