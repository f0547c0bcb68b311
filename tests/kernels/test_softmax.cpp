#include <chrono>
#include <cmath>
#include <iostream>

#include "kernels/ops.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

namespace {

// fp64 reference: softmax (or log_softmax) of x [outer, n, inner] along its middle dim.
std::vector<double> reference_softmax_middle(const Tensor& x, bool log) {
  const std::vector<double> v = x.to_vector<double>();
  const int64_t outer = x.size(0), n = x.size(1), inner = x.size(2);
  std::vector<double> out(v.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * n + k) * inner + i); };
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(v[at(k)]);
      for (int64_t k = 0; k < n; ++k) out[at(k)] = log ? v[at(k)] - std::log(sum) : std::exp(v[at(k)]) / sum;
    }
  return out;
}

// softmax or log_softmax of a row of n in the compute precision (kernels/softmax_math.h): the
// row's sum of n exponentials, and 9 roundings besides: the summands' exp and the numerator's
// (2 ulps each, 4 units: glibc's and CUDA's expf), then the division, or the log (4 units) and
// the subtractions. Each is of a term no bigger than 1 + |y|: softmax's terms are positive, and
// log_softmax's log of the row's sum (>= 1, its error the sum's relative one) is at most |y|.
// `stored`: the output's rounding to f16.
test::ErrorModel softmax_error(int64_t n, int64_t stored = 0) { return {n, 9, stored}; }

Tensor one_hot(const std::vector<int64_t>& labels, int64_t classes) {
  std::vector<double> v(labels.size() * static_cast<size_t>(classes), 0.0);
  for (size_t n = 0; n < labels.size(); ++n) v[n * static_cast<size_t>(classes) + static_cast<size_t>(labels[n])] = 1;
  return from_vector<double>(v, {static_cast<int64_t>(labels.size()), classes});
}

}  // namespace

TEST_CASE("softmax and log_softmax match hand-computed values along dim 0 and 1", "[softmax]") {
  Tensor x = from_vector<float>({1, 2, 3, 1, 1, 1}, {2, 3});
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0), s = e1 + e2 + e3;
  const double rows_tol = softmax_error(3).tolerance(kFloat32), columns_tol = softmax_error(2).tolerance(kFloat32);
  expect_values(softmax(x, 1), {e1 / s, e2 / s, e3 / s, 1 / 3.0, 1 / 3.0, 1 / 3.0}, rows_tol, "softmax dim 1");
  expect_values(softmax(x, -1), {e1 / s, e2 / s, e3 / s, 1 / 3.0, 1 / 3.0, 1 / 3.0}, rows_tol, "softmax dim -1");
  expect_values(log_softmax(x, 1), {1 - std::log(s), 2 - std::log(s), 3 - std::log(s), -std::log(3.0),
                                    -std::log(3.0), -std::log(3.0)},
                rows_tol, "log_softmax dim 1");
  // Columns: [1, 1] -> 1/2 each; [2, 1] and [3, 1] -> sigmoid(1), sigmoid(2).
  const double p1 = 1 / (1 + std::exp(-1.0)), p2 = 1 / (1 + std::exp(-2.0));
  expect_values(softmax(x, 0), {0.5, p1, p2, 0.5, 1 - p1, 1 - p2}, columns_tol, "softmax dim 0");
  expect_values(log_softmax(x, -2), {std::log(0.5), std::log(p1), std::log(p2), std::log(0.5), std::log(1 - p1),
                                     std::log(1 - p2)},
                columns_tol, "log_softmax dim -2");
  CHECK(softmax(x, 0).shape() == Shape{2, 3});
  CHECK(softmax(x, 0).dtype() == DType::f32);
}

TEST_CASE("softmax along the middle dim of a 3-D input", "[softmax]") {
  Tensor x = randn({3, 5, 7}, kFloat64);
  expect_values(softmax(x, 1), reference_softmax_middle(x, false), 1e-14, "softmax middle f64");
  expect_values(log_softmax(x, 1), reference_softmax_middle(x, true), 1e-14, "log_softmax middle f64");
  Tensor x32 = x.to(kFloat32);
  expect_values(softmax(x32, 1), reference_softmax_middle(x32, false), softmax_error(5).tolerance(kFloat32),
                "softmax middle f32");
  // softmax's rows, then the check's own sum of 5 (its terms are softmax's, its result 1)
  expect_values(sum(softmax(x32, 1), 1), std::vector<double>(21, 1.0), test::ErrorModel{5 + 5, 9, 0}.tolerance(kFloat32),
                "rows sum to 1");
}

TEST_CASE("softmax is stable for huge logits", "[softmax]") {
  // Exact: the exponentials are exp(0) = 1 and exp(-1000 or less) = 0, the row sums 1 and 2.
  Tensor x = from_vector<float>({1000, 0, -1000, 1000, 1000, -1000}, {2, 3});
  expect_values(softmax(x, 1), {1, 0, 0, 0.5, 0.5, 0}, 0, "softmax +-1000");
  // log(1) = 0 is exact; log(2) is 4 units of itself, and -2000 - log(2) one rounding more.
  expect_values(log_softmax(x, 1), {0, -1000, -2000, -std::log(2.0), -std::log(2.0), -2000 - std::log(2.0)},
                test::ErrorModel{0, 5, 0}.tolerance(kFloat32), "log_softmax +-1000");
  // -inf logits get probability 0 and do not poison the row.
  Tensor with_inf = from_vector<float>({-INFINITY, 0, -INFINITY}, {3});
  expect_values(softmax(with_inf, 0), {0, 1, 0}, 0, "softmax with -inf");
}

TEST_CASE("softmax: f16, 0-d, one-element and empty inputs", "[softmax][f16]") {
  Tensor h = from_vector<float>({1, 2, 3}, {3}).to(kFloat16);
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0), s = e1 + e2 + e3;
  Tensor p = softmax(h, 0);
  CHECK(p.dtype() == DType::f16);
  // fp32 math on f16-exact inputs, then the output's rounding to f16
  expect_values(p, {e1 / s, e2 / s, e3 / s}, softmax_error(3, 1).tolerance(kFloat16), "f16 softmax");
  expect_values(log_softmax(h, 0), {1 - std::log(s), 2 - std::log(s), 3 - std::log(s)},
                softmax_error(3, 1).tolerance(kFloat16), "f16 log_softmax");
  expect_values(softmax(scalar_tensor(5.0), 0), {1}, 0, "softmax 0-d");
  expect_values(log_softmax(full({1, 1}, -7.0), 1), {0}, 0, "log_softmax one element");
  CHECK(softmax(zeros({0, 3}), 1).shape() == Shape{0, 3});
  CHECK(log_softmax(zeros({2, 0}), 1).shape() == Shape{2, 0});
  expect_error_contains([&] { softmax(zeros({2, 3}), 2); }, {"softmax", "dim 2", "[2, 3]"});
  expect_error_contains([&] { softmax(zeros({2}, kInt64), 0); }, {"softmax", "floating", "i64"});
}

TEST_CASE("softmax and log_softmax gradients pass gradcheck", "[softmax][gradcheck]") {
  Tensor x = randn({3, 4}, kFloat64);
  Tensor x3 = randn({2, 3, 4}, kFloat64);
  expect_gradcheck([](auto& in) { return softmax(in[0], 0); }, {x}, "softmax dim 0");
  expect_gradcheck([](auto& in) { return softmax(in[0], 1); }, {x}, "softmax dim 1");
  expect_gradcheck([](auto& in) { return softmax(in[0], 1); }, {x3}, "softmax middle dim");
  expect_gradcheck([](auto& in) { return log_softmax(in[0], 0); }, {x}, "log_softmax dim 0");
  expect_gradcheck([](auto& in) { return log_softmax(in[0], -1); }, {x}, "log_softmax dim 1");
  expect_gradcheck([](auto& in) { return log_softmax(in[0], 1); }, {x3}, "log_softmax middle dim");
}

TEST_CASE("cross_entropy matches hand-computed values", "[softmax]") {
  Tensor logits = from_vector<float>({1, 2, 3, 1, 1, 1}, {2, 3});
  Tensor labels = from_vector<int64_t>({2, 0}, {2});
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const double expected = ((lse - 3) + std::log(3.0)) / 2;
  // Each sample's log-probability as log_softmax's (magnitude 1 + |lp|), their mean and its rounding
  // (2 more): the mean of 1 + |lp| is 1 + the loss, as the tolerance takes it.
  const test::ErrorModel loss_error{3, 9 + 2, 0};
  Tensor loss = cross_entropy(logits, labels);
  CHECK(loss.shape() == Shape{});
  CHECK(loss.dtype() == DType::f32);
  expect_values(loss, {expected}, loss_error.tolerance(kFloat32), "cross_entropy f32");
  // f64 logits give an f64 loss; the reference's std::exp and std::log round as often again.
  Tensor loss64 = cross_entropy(logits.to(kFloat64), labels);
  CHECK(loss64.dtype() == DType::f64);
  expect_values(loss64, {expected}, test::ErrorModel{2 * 3, 2 * 11, 0}.tolerance(kFloat64), "cross_entropy f64");
  Tensor loss_h = cross_entropy(logits.to(kFloat16), labels);
  CHECK(loss_h.dtype() == DType::f32);
  // the logits are f16-exact and the loss is fp32 math
  expect_values(loss_h, {expected}, loss_error.tolerance(kFloat32), "cross_entropy f16");
  Tensor log_probs;
  kernels::cross_entropy(logits.to(kFloat16), labels, &log_probs);
  CHECK(log_probs.dtype() == DType::f16);
  // both sides are log_softmax in fp32; the f16 one is rounded to f16 once more
  expect_close(log_probs, log_softmax(logits, 1), test::ErrorModel{2 * 3, 2 * 9, 1}.tolerance(kFloat16),
               "cross_entropy log_probs f16");
}

TEST_CASE("cross_entropy is finite for logits of +-1000", "[softmax]") {
  // Sample 0 is certain and right (loss 0); sample 1 is certain and wrong (loss 2000): mean 1000.
  // Exact: the log-probabilities are 0 and -2000 (exp(-2000) = 0, log(1) = 0), their exps 1 and 0.
  Tensor logits = from_vector<float>({1000, -1000, -1000, 1000}, {2, 2}).requires_grad_();
  Tensor labels = from_vector<int64_t>({0, 0}, {2});
  Tensor loss = cross_entropy(logits, labels);
  expect_values(loss, {1000}, 0, "cross_entropy +-1000");
  loss.backward();
  expect_values(logits.grad(), {0, 0, -0.5, 0.5}, 0, "cross_entropy +-1000 grad");
}

TEST_CASE("cross_entropy gradient: gradcheck and the f64 composite", "[softmax][gradcheck]") {
  Tensor logits = randn({5, 7}, kFloat64);
  const std::vector<int64_t> label_values{3, 0, 6, 3, 1};
  Tensor labels = from_vector<int64_t>(label_values, {5});
  // f64 logits give an f64 loss (f32 and f16 give f32), so the default fp64 gradcheck applies.
  CHECK(cross_entropy(logits, labels).dtype() == DType::f64);
  expect_gradcheck([&](auto& in) { return cross_entropy(in[0], labels); }, {logits}, "cross_entropy");
  // Exact check: the same gradient as -sum(log_softmax(x) * onehot) / N, all in f64 (dloss = 1 is exact in f32).
  Tensor a = logits.clone().requires_grad_();
  Tensor b = logits.clone().requires_grad_();
  cross_entropy(a, labels).backward();
  (sum(log_softmax(b, 1) * one_hot(label_values, 7)) * (-1.0 / 5)).backward();
  CHECK(a.grad().dtype() == DType::f64);
  expect_close(a.grad(), b.grad(), 1e-13, "cross_entropy grad vs composite");
  // dloss scales the gradient; f16 log_probs give an f16 gradient.
  Tensor log_probs;
  kernels::cross_entropy(logits, labels, &log_probs);
  Tensor g2 = kernels::cross_entropy_backward(log_probs, labels, scalar_tensor(2.0));
  expect_close(g2, a.grad() * 2.0, 1e-13, "cross_entropy_backward dloss 2");
  Tensor h = logits.to(kFloat16).requires_grad_();
  cross_entropy(h, labels).backward();
  CHECK(h.grad().dtype() == DType::f16);
  // Against f64 on the same f16 logits. dlogit = (exp(lp) - onehot) / N from the f16 log-probs:
  // lp's fp32 error (softmax_error, 1 + |lp|) and its f16 rounding (u |lp|) are relative errors of
  // p = exp(lp); exp, the subtraction, 1/N and the product are 4 fp32 roundings more, the output's
  // f16 rounding one more: 2 f16 roundings of |dlogit| + p (1 + |lp|) / N cover them all.
  Tensor h64 = h.detach().to(kFloat64).requires_grad_();
  cross_entropy(h64, labels).backward();
  const Tensor x64 = h64.detach();
  const Tensor magnitude = abs(h64.grad()) + softmax(x64, 1) * (abs(log_softmax(x64, 1)) + 1.0) / 5.0;
  test::expect_within(h.grad(), h64.grad(), test::ErrorModel{7, 9 + 4, 2}.bound(kFloat16, magnitude),
                      "cross_entropy f16 grad");
}

TEST_CASE("cross_entropy rejects bad labels and shapes, naming them", "[softmax][errors]") {
  Tensor logits = zeros({3, 4});
  expect_error_contains([&] { cross_entropy(logits, from_vector<int64_t>({0, 4, 1}, {3})); },
                        {"cross_entropy", "sample 1", "label 4", "4 classes"});
  expect_error_contains([&] { cross_entropy(logits, from_vector<int64_t>({0, 1, -1}, {3})); },
                        {"cross_entropy", "sample 2", "label -1", "4 classes"});
  expect_error_contains([&] { cross_entropy(zeros({4}), from_vector<int64_t>({0}, {1})); },
                        {"cross_entropy", "[4]", "[1]"});
  expect_error_contains([&] { cross_entropy(logits, from_vector<int64_t>({0, 1}, {2})); },
                        {"cross_entropy", "[3, 4]", "[2]"});
  expect_error_contains([&] { cross_entropy(logits, zeros({3})); }, {"cross_entropy", "labels", "i64", "f32", "[3]"});
}

TEST_CASE("cross_entropy_backward checks its labels too", "[softmax][errors]") {
  // The backward indexes with its labels, which need not be the forward's: the entry point
  // checks them again (kernels/dispatch_softmax.cpp), with the forward's message.
  const Tensor logits = randn({3, 4});
  Tensor log_probs;
  kernels::cross_entropy(logits, from_vector<int64_t>({0, 3, 1}, {3}), &log_probs);
  expect_error_contains(
      [&] { kernels::cross_entropy_backward(log_probs, from_vector<int64_t>({0, 1, 4}, {3}), scalar_tensor(1.0)); },
      {"cross_entropy_backward", "label 4", "sample 2", "4 classes", "0 <= label < 4"});
  expect_error_contains(
      [&] { kernels::cross_entropy_backward(log_probs, from_vector<int64_t>({-7, 1, 2}, {3}), scalar_tensor(1.0)); },
      {"cross_entropy_backward", "label -7", "sample 0"});
}

TEST_CASE("softmax CPU perf sanity (timings printed, not asserted)", "[softmax][perf]") {
  Tensor x = randn({4096, 1000});
  Tensor labels = zeros({4096}, kInt64);  // class 0 everywhere
  auto time_ms = [](auto&& fn) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  Tensor p, p0, loss;
  const double t_last = time_ms([&] { p = softmax(x, 1); });
  const double t_first = time_ms([&] { p0 = softmax(x, 0); });
  const double t_ce = time_ms([&] { loss = cross_entropy(x, labels); });
  std::cout << "[softmax perf] 4096x1000 f32: softmax dim 1 " << t_last << " ms, dim 0 " << t_first
            << " ms, cross_entropy " << t_ce << " ms\n";
  // softmax's rows of 1000 and of 4096, then the check's own sum as long (its terms softmax's, its result 1)
  expect_values(sum(p, 1), std::vector<double>(4096, 1.0), test::ErrorModel{2 * 1000, 9, 0}.tolerance(kFloat32),
                "perf rows sum to 1");
  expect_values(sum(p0, 0), std::vector<double>(1000, 1.0), test::ErrorModel{2 * 4096, 9, 0}.tolerance(kFloat32),
                "perf columns sum to 1");
  CHECK(std::isfinite(loss.item<float>()));
}
