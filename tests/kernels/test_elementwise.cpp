#include <omp.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/cuda_runtime.h"
#include "kernels/ops.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

TEST_CASE("unary ops match hand-computed values", "[elementwise]") {
  // The inputs are exact in f32. A library function (expf, tanhf, erff, logf, powf) is within
  // 2 ulps of its result, 4 units (tests/support/error_bound.h); +, *, / and sqrt round once.
  const double u = test::unit_roundoff(kFloat32);
  Tensor x = from_vector<float>({-2.0f, -0.5f, 0.0f, 0.5f, 3.0f}, {5});
  expect_values(relu(x), {0, 0, 0, 0.5, 3}, 0, "relu");
  expect_values(neg(x), {2, 0.5, 0, -0.5, -3}, 0, "neg");
  expect_values(exp(x), {std::exp(-2.0), std::exp(-0.5), 1, std::exp(0.5), std::exp(3.0)}, 4 * u, "exp");
  // 1 / (1 + exp(-x)), or exp(x) / (1 + exp(x)) below 0: the exps, the add and the division,
  // every term positive
  expect_values(sigmoid(x), {1 / (1 + std::exp(2.0)), 1 / (1 + std::exp(0.5)), 0.5, 1 / (1 + std::exp(-0.5)),
                             1 / (1 + std::exp(-3.0))},
                test::ErrorModel{0, 4 + 4 + 2, 0}.tolerance(kFloat32), "sigmoid");
  expect_values(tanh(x), {std::tanh(-2.0), std::tanh(-0.5), 0, std::tanh(0.5), std::tanh(3.0)}, 4 * u, "tanh");
  // 0.5 x (1 + erf(x c)), c = 1/sqrt(2) rounded: erf's 4 units of |erf|, c's rounding and the
  // product x c (each moves erf by under one unit: erf'(t) t <= 0.49), the add and the product:
  // each of a term of 0.5 |x| (1 + |erf|), which 1 + erf cancels for x < 0.
  auto gelu_of = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
  std::vector<double> gelu_bound;
  for (double v : {-2.0, -0.5, 0.0, 0.5, 3.0}) {
    const double magnitude = 0.5 * std::fabs(v) * (1 + std::fabs(std::erf(v / std::sqrt(2.0))));
    gelu_bound.push_back(test::ErrorModel{0, 4 + 2 + 2, 0}.bound(kFloat32, magnitude));
  }
  test::expect_within(gelu(x), {gelu_of(-2), gelu_of(-0.5), 0, gelu_of(0.5), gelu_of(3)}, gelu_bound, "gelu");
  // SiLU x sigmoid(x) (PyTorch's, Python's values): sigmoid's exp, add and division, and the product,
  // every term positive but for the sign of x: 4 + 2 + 1 units of |x| sigmoid(|x|) <= |result| + 1.
  expect_values(silu(x), {-0.2384058440442351, -0.1887703343990727, 0, 0.3112296656009273, 2.8577223804673},
                test::ErrorModel{0, 4 + 2 + 1, 0}.tolerance(kFloat32), "silu");
  Tensor p = from_vector<float>({0.25f, 1.0f, 4.0f}, {3});
  expect_values(sqrt(p), {0.5, 1, 2}, 0, "sqrt");  // correctly rounded, and these roots are exact
  expect_values(log(p), {std::log(0.25), 0, std::log(4.0)}, 4 * u, "log");
  expect_values(pow(p, 3.0), {0.015625, 1, 64}, 4 * u, "pow");
}

TEST_CASE("unary gradients pass gradcheck", "[elementwise][gradcheck]") {
  Tensor x = rand({3, 4}, kFloat64, 0.2, 2.0);  // positive: log, sqrt, pow are smooth there
  Tensor s = randn({3, 4}, kFloat64);
  expect_gradcheck([](auto& in) { return exp(in[0]); }, {s}, "exp");
  expect_gradcheck([](auto& in) { return log(in[0]); }, {x}, "log");
  expect_gradcheck([](auto& in) { return sqrt(in[0]); }, {x}, "sqrt");
  expect_gradcheck([](auto& in) { return pow(in[0], 2.5); }, {x}, "pow");
  expect_gradcheck([](auto& in) { return sigmoid(in[0]); }, {s}, "sigmoid");
  expect_gradcheck([](auto& in) { return tanh(in[0]); }, {s}, "tanh");
  expect_gradcheck([](auto& in) { return neg(in[0]); }, {s}, "neg");
  expect_gradcheck([](auto& in) { return gelu(in[0]); }, {s}, "gelu");
  expect_gradcheck([](auto& in) { return silu(in[0]); }, {s}, "silu");
  Tensor away_from_kink = from_vector<double>({-1.5, -0.3, 0.2, 0.9, 2.0, -0.7}, {2, 3});
  expect_gradcheck([](auto& in) { return relu(in[0]); }, {away_from_kink}, "relu");
  expect_gradcheck([](auto& in) { return abs(in[0]); }, {away_from_kink}, "abs");
}

TEST_CASE("binary ops broadcast like NumPy", "[elementwise]") {
  Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor row = from_vector<float>({10, 20, 30}, {3});
  Tensor col = from_vector<float>({100, 200}, {2, 1});
  expect_values(a + row, {11, 22, 33, 14, 25, 36}, 0, "add row");
  expect_values(a * col, {100, 200, 300, 800, 1000, 1200}, 0, "mul col");
  expect_values(col - row, {90, 80, 70, 190, 180, 170}, 0, "sub outer");
  expect_values(a / 2.0, {0.5, 1, 1.5, 2, 2.5, 3}, 0, "div scalar");
  expect_values(1.0 - a, {0, -1, -2, -3, -4, -5}, 0, "rsub scalar");
  expect_values(12.0 / a, {12, 6, 4, 3, 2.4, 2}, test::unit_roundoff(kFloat32), "rdiv scalar");  // one division
  CHECK((a + row).shape() == Shape{2, 3});
  CHECK((col - row).shape() == Shape{2, 3});
}

TEST_CASE("broadcast arithmetic, comparisons, expand and their gradients match loops on 1, 2 and 3 threads",
          "[elementwise]") {
  // a [3, 1, 5003] with b [1, 7, 1]: 105,063 outputs, several threads' grain, so on 2 and 3 threads
  // a thread's share starts inside a row of the last dim. Small whole numbers: every result, and
  // every gradient's sum, is exact in f32, so the loops below are the values to the bit.
  constexpr int64_t I = 3, J = 7, K = 5003;
  std::vector<float> av(static_cast<size_t>(I * K)), bv(static_cast<size_t>(J)), wv(static_cast<size_t>(I * J * K));
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(static_cast<int64_t>(i % 13) - 6);
  for (size_t j = 0; j < bv.size(); ++j) bv[j] = static_cast<float>(j) - 3.0f;
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(i % 5) - 2.0f;
  std::vector<double> sum(wv.size()), product(wv.size()), equal(wv.size()), expanded(wv.size());
  std::vector<double> da(av.size(), 0.0), db(bv.size(), 0.0);
  for (int64_t i = 0; i < I; ++i)
    for (int64_t j = 0; j < J; ++j)
      for (int64_t k = 0; k < K; ++k) {
        const size_t o = static_cast<size_t>((i * J + j) * K + k), ia = static_cast<size_t>(i * K + k);
        const double x = av[ia], y = bv[static_cast<size_t>(j)], w = wv[o];
        sum[o] = x + y;
        product[o] = x * y;
        equal[o] = x == y ? 1 : 0;
        expanded[o] = x;
        da[ia] += w * y;  // d(a * b)/da summed over j
        db[static_cast<size_t>(j)] += w * x;  // and d/db over i and k
      }
  // The same values with dims of size 1 among and after them, which the walk drops.
  struct Layout {
    Shape a, b, out;
  };
  const int threads = omp_get_max_threads();
  for (const Layout& layout : {Layout{{I, 1, K}, {1, J, 1}, {I, J, K}}, Layout{{I, 1, 1, K, 1}, {1, J, 1, 1, 1}, {I, J, 1, K, 1}}})
    for (const int count : {1, 2, 3}) {
      INFO(layout.a.str() << " with " << layout.b.str() << ", " << count << " threads");
      omp_set_num_threads(count);
      const Tensor a = from_vector<float>(av, layout.a).requires_grad_(), b = from_vector<float>(bv, layout.b).requires_grad_();
      expect_values(a + b, sum, 0, "a + b");
      expect_values(b + a, sum, 0, "b + a");
      expect_values(a * b, product, 0, "a * b");
      expect_values(a.eq(b), equal, 0, "a == b");
      expect_values(kernels::expand(a.detach(), layout.out), expanded, 0, "expand");
      // f32 runs each combination of steps as its own loop, other dtypes one loop for all
      const Tensor a64 = a.detach().to(kFloat64), b64 = b.detach().to(kFloat64);
      expect_values(a64 * b64, product, 0, "a * b in f64");
      expect_values(a64.to(DType::i64).eq(b64.to(DType::i64)), equal, 0, "a == b in i64");
      expect_values(kernels::expand(a64, layout.out), expanded, 0, "expand in f64");
      mul(a, b).backward(from_vector<float>(wv, layout.out));
      expect_values(a.grad(), da, 0, "d(a * b)/da");
      expect_values(b.grad(), db, 0, "d(a * b)/db");
    }
  omp_set_num_threads(threads);
}

TEST_CASE("sum_to sums each broadcast dim's terms in x's order", "[elementwise]") {
  // x [2, 3, 4] holds 0..23 (sums exact in f32); each target keeps some dims and sums the rest.
  std::vector<float> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const Tensor x = from_vector<float>(v, {2, 3, 4});
  const auto naive = [&](const Shape& to) {  // out[o] for every x element, its broadcast index kept
    std::vector<double> out(static_cast<size_t>(to.numel()), 0.0);
    const std::vector<int64_t> s = to.sizes();
    const int64_t d = static_cast<int64_t>(s.size());
    const int64_t in = d >= 3 ? s[d - 3] : 1, jn = d >= 2 ? s[d - 2] : 1, kn = d >= 1 ? s[d - 1] : 1;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 4; ++k) {
          const int64_t ii = in > 1 ? i : 0, jj = jn > 1 ? j : 0, kk = kn > 1 ? k : 0;
          out[static_cast<size_t>((ii * jn + jj) * kn + kk)] += static_cast<double>((i * 3 + j) * 4 + k);
        }
    return out;
  };
  for (const Shape& to : {Shape{4}, Shape{3, 1}, Shape{2, 1, 4}, Shape{2, 3, 1}, Shape{1, 3, 4}, Shape{1}, Shape{}}) {
    INFO(to.str());
    const Tensor s = kernels::sum_to(x, to);
    CHECK(s.shape() == to);
    expect_values(s, naive(to), 0, "sum_to " + to.str());
  }
  // In x's order: 1e8 + 1 rounds back to 1e8 in f32, so ((1e8 + 1) - 1e8) + 1 is 1, where a
  // pairwise or a reversed sum gives 0.
  const Tensor cancel = from_vector<float>({1e8f, 1.0f, -1e8f, 1.0f, 1e8f, 1.0f, -1e8f, 1.0f}, {2, 4});
  expect_values(kernels::sum_to(cancel, Shape{2, 1}), {1, 1}, 0, "sum_to in x's order");
  expect_values(kernels::sum_to(cancel, Shape{}), {1}, 0, "sum_to of every element in x's order");
}

TEST_CASE("binary gradients pass gradcheck, broadcasting included", "[elementwise][gradcheck]") {
  Tensor a = randn({2, 3}, kFloat64);
  Tensor b = rand({2, 3}, kFloat64, 0.5, 2.0);
  Tensor row = rand({3}, kFloat64, 0.5, 2.0);
  Tensor col = rand({2, 1}, kFloat64, 0.5, 2.0);
  expect_gradcheck([](auto& in) { return add(in[0], in[1]); }, {a, row}, "add broadcast");
  expect_gradcheck([](auto& in) { return sub(in[0], in[1]); }, {col, a}, "sub broadcast");
  expect_gradcheck([](auto& in) { return mul(in[0], in[1]); }, {a, col}, "mul broadcast");
  expect_gradcheck([](auto& in) { return div(in[0], in[1]); }, {a, b}, "div");
  expect_gradcheck([](auto& in) { return div(in[0], in[1]); }, {a, row}, "div broadcast");
  expect_gradcheck([](auto& in) { return rdiv(in[0], 3.0); }, {b}, "rdiv scalar");
  expect_gradcheck([](auto& in) { return rsub(mul(in[0], 2.0), 1.0); }, {a}, "scalar chain");
}

TEST_CASE("one-element and empty tensors", "[elementwise]") {
  Tensor one = full({1}, 2.0);
  Tensor scalar = scalar_tensor(3.0);
  expect_values(one * scalar, {6}, 0, "mul 1-element");
  CHECK((one * scalar).shape() == Shape{1});
  Tensor empty_t = zeros({0, 3});
  Tensor r = relu(empty_t + from_vector<float>({1, 2, 3}, {3}));
  CHECK(r.shape() == Shape{0, 3});
  CHECK(r.numel() == 0);
}

TEST_CASE("shape, dtype and device mismatches name the op and both sides", "[elementwise][errors]") {
  Tensor a = zeros({2, 3});
  Tensor b = zeros({4});
  expect_error_contains([&] { add(a, b); }, {"add", "[2, 3]", "[4]"});
  expect_error_contains([&] { mul(a, zeros({2, 3}, kFloat64)); }, {"mul", "dtype", "f32", "f64"});
  expect_error_contains([&] { relu(zeros({2}, kInt64)); }, {"relu", "floating", "i64"});
  if (!cuda::is_available()) expect_error_contains([&] { a.to(kCUDA); }, {"cuda:0"});
}

TEST_CASE("f16 is a storage type with fp32 math", "[elementwise][f16]") {
  Tensor x = from_vector<float>({-1.0f, 0.5f, 2.0f}, {3}).to(kFloat16);
  CHECK(x.dtype() == DType::f16);
  Tensor y = exp(x) * x;
  CHECK(y.dtype() == DType::f16);
  // fp32 math, each result stored in f16: exp (4 units) rounded to f16, the product (exact for two
  // f16 values, counted anyway) rounded to f16
  expect_values(y, {-std::exp(-1.0), 0.5 * std::exp(0.5), 2 * std::exp(2.0)},
                test::ErrorModel{0, 5, 2}.tolerance(kFloat16), "f16 exp*x");
  Tensor w = from_vector<float>({1.0f, 2.0f, 3.0f}, {3}).to(kFloat16).requires_grad_();
  sum(mul(w, w)).backward();
  expect_values(w.grad(), {2, 4, 6}, 0, "f16 grad");  // 1 * w + 1 * w: small integers, exact
}

TEST_CASE("relu propagates NaN, as PyTorch's does (a NaN must reach the loss, not become 0)", "[kernels]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> y = relu(from_vector<float>({nan, -1.0f, 2.0f}, {3})).to_vector<float>();
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == 2.0f);
}
