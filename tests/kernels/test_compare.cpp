// Comparisons (core/compare_ops.def: eq, ne, lt, le, gt, ge) against hand-worked values: u8 1 or 0,
// broadcasting, the scalar forms and their rounding rule, NaN, and the accuracy idiom
// pred.eq(labels).sum().item<int64_t>() with its i64 count. Every device runs them in the op
// contract (tests/ops/op_cases_elementwise.cpp).
#include <cmath>
#include <limits>

#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

TEST_CASE("comparisons give u8 ones and zeros", "[compare]") {
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {4});
  const Tensor b = from_vector<float>({4, 2, 1, 4}, {4});
  const Tensor e = eq(a, b);
  CHECK(e.dtype() == kByte);
  CHECK(e.shape() == Shape{4});
  CHECK(e.to_vector<uint8_t>() == std::vector<uint8_t>{0, 1, 0, 1});
  CHECK(a.ne(b).to_vector<uint8_t>() == std::vector<uint8_t>{1, 0, 1, 0});
  CHECK(a.lt(b).to_vector<uint8_t>() == std::vector<uint8_t>{1, 0, 0, 0});
  CHECK(a.le(b).to_vector<uint8_t>() == std::vector<uint8_t>{1, 1, 0, 1});
  CHECK(a.gt(b).to_vector<uint8_t>() == std::vector<uint8_t>{0, 0, 1, 0});
  CHECK(a.ge(b).to_vector<uint8_t>() == std::vector<uint8_t>{0, 1, 1, 1});
  // Broadcasting: [2, 1] against [3] gives [2, 3].
  const Tensor col = from_vector<int64_t>({1, 3}, {2, 1});
  const Tensor row = from_vector<int64_t>({1, 2, 3}, {3});
  CHECK(ge(col, row).shape() == Shape{2, 3});
  CHECK(ge(col, row).to_vector<uint8_t>() == std::vector<uint8_t>{1, 0, 0, 1, 1, 1});
  // NaN equals nothing, itself included; != is true for it.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor n = from_vector<double>({nan, 1.0}, {2});
  CHECK(eq(n, n).to_vector<uint8_t>() == std::vector<uint8_t>{0, 1});
  CHECK(ne(n, n).to_vector<uint8_t>() == std::vector<uint8_t>{1, 0});
  CHECK(lt(n, 2.0).to_vector<uint8_t>() == std::vector<uint8_t>{0, 1});
  // Not differentiable: a u8 result with no graph, whatever its inputs require.
  const Tensor w = ones({3}).requires_grad_();
  CHECK_FALSE(gt(w, 0.5).requires_grad());
}

TEST_CASE("comparisons with a number: rounded to a floating dtype, exact for integers", "[compare]") {
  // 0.1 rounded to f32 is what an f32 tensor holds for 0.1: equal, as in PyTorch
  // (torch.tensor([0.1]) == 0.1 is True); in f64 the f32 value differs from 0.1.
  CHECK(from_vector<float>({0.1f}, {1}).eq(0.1).item<uint8_t>() == 1);
  CHECK(from_vector<float>({0.1f}, {1}).to(kFloat64).eq(0.1).item<uint8_t>() == 0);
  CHECK(from_vector<float>({0.1f}, {1}).to(kHalf).eq(0.1).item<uint8_t>() == 1);
  // An integer tensor against a fraction compares in double: 2 < 2.5, 3 > 2.5.
  const Tensor i = from_vector<int64_t>({2, 3}, {2});
  CHECK(i.lt(2.5).to_vector<uint8_t>() == std::vector<uint8_t>{1, 0});
  CHECK(i.eq(3).to_vector<uint8_t>() == std::vector<uint8_t>{0, 1});
  CHECK(from_vector<uint8_t>({0, 255}, {2}).ge(255).to_vector<uint8_t>() == std::vector<uint8_t>{0, 1});
}

TEST_CASE("the accuracy idiom: argmax(1), eq, sum, item", "[compare]") {
  // Four samples of three classes; the predictions are classes 2, 0, 1, 1 and the labels 2, 1, 1, 0.
  const Tensor output = from_vector<float>({0.1f, 0.2f, 0.7f, 0.9f, 0.05f, 0.05f, 0.2f, 0.6f, 0.2f, 0.3f, 0.4f, 0.3f},
                                           {4, 3});
  const Tensor labels = from_vector<int64_t>({2, 1, 1, 0}, {4});
  const Tensor pred = output.argmax(1);
  const Tensor correct = pred.eq(labels).sum();
  CHECK(correct.dtype() == kLong);  // PyTorch's: the sum of a bool or u8 tensor is i64
  CHECK(correct.dim() == 0);
  CHECK(correct.item<int64_t>() == 2);
  // Per row, along a dim, and over more ones than a u8 holds.
  CHECK(eq(pred, labels).reshape({2, 2}).sum(1).to_vector<int64_t>() == std::vector<int64_t>{1, 1});
  CHECK(ones({1000, 300}, kByte).sum().item<int64_t>() == 300000);
  CHECK(full({70000}, 200, kByte).sum().item<int64_t>() == int64_t{70000} * 200);
  CHECK(from_vector<int64_t>({int64_t{1} << 60, 1}, {2}).sum().item<int64_t>() == (int64_t{1} << 60) + 1);  // exact
  expect_error_contains([] { mean(ones({3}, kByte)); }, {"mean", "u8"});
}
