#include <string>
#include <utility>
#include <vector>

#include "kernels/ops.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

namespace {

// C = op(A) op(B) in fp64 with three plain loops: the oracle for the GEMM path.
Tensor naive_matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  const std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
  const int64_t batch = a.dim() == 3 ? a.size(0) : 1;
  const int64_t m = transpose_a ? a.size(-1) : a.size(-2);
  const int64_t k = transpose_a ? a.size(-2) : a.size(-1);
  const int64_t n = transpose_b ? b.size(-2) : b.size(-1);
  const int64_t b_step = b.dim() == 3 ? k * n : 0;
  std::vector<double> c(static_cast<size_t>(batch * m * n), 0.0);
  for (int64_t s = 0; s < batch; ++s) {
    const double* pa = va.data() + s * m * k;
    const double* pb = vb.data() + s * b_step;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p)
          acc += (transpose_a ? pa[p * m + i] : pa[i * k + p]) * (transpose_b ? pb[j * k + p] : pb[p * n + j]);
        c[static_cast<size_t>((s * m + i) * n + j)] = acc;
      }
  }
  return from_vector<double>(c, a.dim() == 3 ? Shape{batch, m, n} : Shape{m, n});
}

// Stored shape of an [rows, cols] operand (with an optional batch) when its flag transposes it.
Shape stored(int64_t batch, int64_t rows, int64_t cols, bool transposed) {
  if (transposed) std::swap(rows, cols);
  return batch > 0 ? Shape{batch, rows, cols} : Shape{rows, cols};
}

std::string flags_name(bool transpose_a, bool transpose_b) {
  return std::string(transpose_a ? "A^T" : "A") + " x " + (transpose_b ? "B^T" : "B");
}

// How far a GEMM of dtype data may be from the fp64 loop, in any summation order (whatever the
// BLAS kernels): gamma(K) sum |a| |b| (tests/support/error_bound.h), and the rounding to f16.
Tensor gemm_bound(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  const int64_t k = transpose_a ? a.size(-2) : a.size(-1);
  return test::sum_error_bound(k, a.dtype(), naive_matmul(abs(a.to(kFloat64)), abs(b.to(kFloat64)), transpose_a, transpose_b));
}

}  // namespace

TEST_CASE("matmul matches hand-computed products", "[matmul]") {
  Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = from_vector<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  expect_values(matmul(a, b), {58, 64, 139, 154}, 0, "matmul 2x3 x 3x2");
  expect_values(kernels::matmul(a, a, false, true), {14, 32, 32, 77}, 0, "A A^T");
  expect_values(kernels::matmul(a, a, true, false), {17, 22, 27, 22, 29, 36, 27, 36, 45}, 0, "A^T A");
  expect_values(kernels::matmul(b, a, true, true), {58, 139, 64, 154}, 0, "B^T A^T = (A B)^T");
  CHECK(kernels::matmul(a, a, true, false).shape() == Shape{3, 3});
}

TEST_CASE("matmul matches an fp64 triple loop for every transpose flag", "[matmul]") {
  const int64_t m = 37, k = 53, n = 29;
  for (DType dtype : {DType::f32, DType::f64}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        Tensor a = randn(stored(0, m, k, ta), dtype);
        Tensor b = randn(stored(0, k, n, tb), dtype);
        Tensor c = kernels::matmul(a, b, ta, tb);
        CHECK(c.dtype() == dtype);
        test::expect_within(c, naive_matmul(a, b, ta, tb), gemm_bound(a, b, ta, tb), flags_name(ta, tb) + " " + dtype_name(dtype));
      }
    }
  }
}

TEST_CASE("batched matmul: 3-D x 3-D and 3-D x shared 2-D", "[matmul]") {
  // 3 x (37x53x29) runs threads over the batch; 2 x (70x70x70) runs BLAS per product.
  struct Case { int64_t batch, m, k, n; };
  for (Case s : {Case{3, 37, 53, 29}, Case{2, 70, 70, 70}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const std::string name = flags_name(ta, tb) + " batch " + std::to_string(s.batch) + " m " + std::to_string(s.m);
        Tensor a = randn(stored(s.batch, s.m, s.k, ta), kFloat32);
        Tensor b3 = randn(stored(s.batch, s.k, s.n, tb), kFloat32);
        Tensor b2 = randn(stored(0, s.k, s.n, tb), kFloat32);
        Tensor c3 = kernels::matmul(a, b3, ta, tb);
        Tensor c2 = kernels::matmul(a, b2, ta, tb);  // without ta: folded into one [B*M, K] GEMM
        CHECK(c3.shape() == Shape{s.batch, s.m, s.n});
        CHECK(c2.shape() == Shape{s.batch, s.m, s.n});
        test::expect_within(c3, naive_matmul(a, b3, ta, tb), gemm_bound(a, b3, ta, tb), "3-D x 3-D " + name);
        test::expect_within(c2, naive_matmul(a, b2, ta, tb), gemm_bound(a, b2, ta, tb), "3-D x 2-D " + name);
      }
    }
  }
}

TEST_CASE("matmul gradients pass gradcheck", "[matmul][gradcheck]") {
  expect_gradcheck([](auto& in) { return matmul(in[0], in[1]); }, {randn({4, 5}, kFloat64), randn({5, 3}, kFloat64)},
                   "matmul 2-D");
  expect_gradcheck([](auto& in) { return matmul(in[0], in[1]); },
                   {randn({2, 4, 5}, kFloat64), randn({2, 5, 3}, kFloat64)}, "matmul 3-D x 3-D");
  expect_gradcheck([](auto& in) { return matmul(in[0], in[1]); }, {randn({3, 4, 5}, kFloat64), randn({5, 2}, kFloat64)},
                   "matmul 3-D x 2-D");
  // A tensor used as both operands gets the sum of both gradients.
  expect_gradcheck([](auto& in) { return matmul(in[0], in[0]); }, {randn({3, 3}, kFloat64)}, "matmul X X");
}

TEST_CASE("matmul backward computes only the gradients that are needed", "[matmul][gradcheck]") {
  Tensor x = randn({3, 4, 5}, kFloat64);
  Tensor w = randn({5, 2}, kFloat64).requires_grad_();
  sum(matmul(x, w)).backward();  // dW = X^T dC with dC all ones, the batch folded into rows
  CHECK_FALSE(x.grad().defined());
  const Tensor x12 = x.reshape(Shape{12, 5}), ones12 = ones({12, 2}, kFloat64);
  test::expect_within(w.grad(), naive_matmul(x12, ones12, true, false), gemm_bound(x12, ones12, true, false),
                      "dW with constant x");

  Tensor x2 = randn({4, 5}, kFloat64).requires_grad_();
  Tensor w2 = randn({5, 2}, kFloat64);
  sum(matmul(x2, w2)).backward();  // dX = dC W^T
  CHECK_FALSE(w2.grad().defined());
  const Tensor ones4 = ones({4, 2}, kFloat64);
  test::expect_within(x2.grad(), naive_matmul(ones4, w2, false, true), gemm_bound(ones4, w2, false, true), "dX with constant w");
}

TEST_CASE("matmul of 1x1, K = 0 and empty operands", "[matmul]") {
  expect_values(matmul(full({1, 1}, 3.0), full({1, 1}, -2.0)), {-6}, 0, "1x1");
  Tensor c = matmul(zeros({2, 0}), zeros({0, 3}));  // an empty sum is 0
  CHECK(c.shape() == Shape{2, 3});
  expect_values(c, std::vector<double>(6, 0.0), 0, "K = 0");
  Tensor cb = kernels::matmul(zeros({2, 0, 3}), zeros({2, 0, 4}), true, false);
  CHECK(cb.shape() == Shape{2, 3, 4});
  expect_values(cb, std::vector<double>(24, 0.0), 0, "batched K = 0");
  CHECK(matmul(zeros({0, 3}), ones({3, 4})).shape() == Shape{0, 4});
  CHECK(matmul(ones({2, 3}), zeros({3, 0})).shape() == Shape{2, 0});
  CHECK(matmul(zeros({0, 2, 3}), ones({3, 4})).shape() == Shape{0, 2, 4});
}

TEST_CASE("f16 matmul is fp32 math rounded to f16", "[matmul][f16]") {
  Tensor a = randn({37, 53}).to(kFloat16);
  Tensor b = randn({53, 29}).to(kFloat16);
  Tensor c = matmul(a, b);
  CHECK(c.dtype() == DType::f16);
  // The reference uses the same f16 inputs; what remains is fp32 accumulation and rounding the
  // result to f16 (gemm_bound has both).
  test::expect_within(c, naive_matmul(a, b, false, false), gemm_bound(a, b, false, false), "f16 matmul");
  Tensor a3 = randn({2, 29, 37}).to(kFloat16);
  Tensor b2 = randn({29, 11}).to(kFloat16);
  Tensor cb = kernels::matmul(a3, b2, true, false);
  CHECK(cb.dtype() == DType::f16);
  test::expect_within(cb, naive_matmul(a3, b2, true, false), gemm_bound(a3, b2, true, false), "f16 batched A^T x B");
}

TEST_CASE("matmul errors name the op and the shapes", "[matmul][errors]") {
  expect_error_contains([] { matmul(zeros({2, 3}), zeros({4, 5})); }, {"matmul", "[2, 3]", "[4, 5]", "inner"});
  expect_error_contains([] { kernels::matmul(zeros({2, 3}), zeros({2, 5}), false, true); },
                        {"matmul", "[2, 3]", "[2, 5]^T"});
  expect_error_contains([] { matmul(zeros({3}), zeros({3, 2})); }, {"matmul", "[3]", "[3, 2]"});
  expect_error_contains([] { matmul(zeros({2, 3}), zeros({3})); }, {"matmul", "[2, 3]", "[3]"});
  expect_error_contains([] { matmul(zeros({2, 3, 4}), zeros({3, 4, 5})); },
                        {"matmul", "batch", "[2, 3, 4]", "[3, 4, 5]"});
  expect_error_contains([] { matmul(zeros({3, 4}), zeros({2, 4, 5})); }, {"matmul", "[3, 4]", "[2, 4, 5]"});
  expect_error_contains([] { matmul(zeros({2, 2}, kInt64), zeros({2, 2}, kInt64)); }, {"matmul", "i64"});
  expect_error_contains([] { matmul(zeros({2, 2}), zeros({2, 2}, kFloat64)); }, {"matmul", "f32", "f64"});
}
