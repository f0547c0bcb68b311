// narrow, select, slice, unsqueeze, squeeze, permute, cat and stack against hand-written values,
// which of them are views, and their gradients by hand (the op contract, tests/ops/, runs them on
// every device and dtype with gradcheck).
#include "core/row_view.h"
#include "tests/support/expect.h"

using namespace ember;
using test::expect_values;

namespace {
// [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
Tensor grid() { return arange(0, 12, 1, kFloat32).reshape(Shape{3, 4}); }
}  // namespace

TEST_CASE("narrow, select and slice take libtorch's elements", "[slicing]") {
  const Tensor x = grid();
  expect_values(narrow(x, 1, 1, 2), {1, 2, 5, 6, 9, 10}, 0, "narrow dim 1");
  expect_values(x.narrow(-1, -2, 2), {2, 3, 6, 7, 10, 11}, 0, "narrow negative dim and start");
  CHECK(narrow(x, 0, 3, 0).shape() == Shape{0, 4});
  expect_values(select(x, 1, -1), {3, 7, 11}, 0, "select dim 1 index -1");
  CHECK(select(x, 0, 2).shape() == Shape{4});
  CHECK(select(select(x, 0, 1), 0, 2).shape() == Shape{});
  expect_values(slice(x, 1, 0, INT64_MAX, 2), {0, 2, 4, 6, 8, 10}, 0, "slice ::2");
  expect_values(x.slice(1, -3, -1), {1, 2, 5, 6, 9, 10}, 0, "slice -3:-1");
  expect_values(slice(x, 0, -100, 100, 2), {0, 1, 2, 3, 8, 9, 10, 11}, 0, "slice clamped, step 2");
  CHECK(slice(x, 1, 3, 1).shape() == Shape{3, 0});
  CHECK(slice(x, 1, 7).shape() == Shape{3, 0});
  expect_values(slice(arange(0, 10, 1, kFloat32), 0, 1, 9, 3), {1, 4, 7}, 0, "slice 1:9:3");
}

TEST_CASE("contiguous slices are views, the others copies", "[slicing]") {
  const Tensor x = grid();
  CHECK(narrow(x, 0, 1, 2).shares_storage(x));
  CHECK(select(x, 0, 2).shares_storage(x));
  CHECK(slice(x, 0, 1).shares_storage(x));
  CHECK(narrow(x, 1, 0, 4).shares_storage(x));  // all of dim 1
  CHECK(narrow(x.reshape(Shape{1, 3, 4}), 1, 1, 1).shares_storage(x));
  CHECK_FALSE(narrow(x, 1, 1, 2).shares_storage(x));
  CHECK_FALSE(slice(x, 0, 0, 3, 2).shares_storage(x));
  CHECK(x.unsqueeze(1).shares_storage(x));
  CHECK(x.unsqueeze(0).squeeze().shares_storage(x));
  CHECK_FALSE(x.permute({1, 0}).shares_storage(x));
  // A view of rows of a view: the storage offsets add up.
  expect_values(select(narrow(row_view(x, 1, 2), 0, 1, 1), 0, 0), {8, 9, 10, 11}, 0, "row of rows");
  // Like libtorch, a write through a view is seen by x.
  const Tensor base = x.clone();
  select(base, 0, 1).fill_(-1);
  expect_values(base, {0, 1, 2, 3, -1, -1, -1, -1, 8, 9, 10, 11}, 0, "written through a view");
}

TEST_CASE("unsqueeze, squeeze and permute shapes and values", "[slicing]") {
  const Tensor x = grid();
  CHECK(unsqueeze(x, 0).shape() == Shape{1, 3, 4});
  CHECK(unsqueeze(x, -1).shape() == Shape{3, 4, 1});
  CHECK(unsqueeze(x, 1).shape() == Shape{3, 1, 4});
  CHECK(zeros({1, 3, 1}).squeeze().shape() == Shape{3});
  CHECK(zeros({1, 3, 1}).squeeze(0).shape() == Shape{3, 1});
  CHECK(zeros({1, 3, 1}).squeeze(1).shape() == Shape{1, 3, 1});
  CHECK(zeros({}).squeeze(-1).shape() == Shape{});
  expect_values(x.permute({1, 0}), {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, 0, "permute 2-D");
  const Tensor y = arange(0, 24, 1, kFloat32).reshape(Shape{2, 3, 4}).permute({2, 0, -2});
  CHECK(y.shape() == Shape{4, 2, 3});
  // y[k, i, j] = x[i, j, k] = 12 i + 4 j + k
  expect_values(select(y, 0, 1), {1, 5, 9, 13, 17, 21}, 0, "permute 3-D, k = 1");
}

TEST_CASE("cat and stack join along a dim", "[slicing]") {
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  const Tensor b = from_vector<float>({5, 6}, {2, 1});
  expect_values(cat({a, b}, 1), {1, 2, 5, 3, 4, 6}, 0, "cat dim 1");
  expect_values(cat({a, b.reshape(Shape{1, 2})}, 0), {1, 2, 3, 4, 5, 6}, 0, "cat dim 0");
  expect_values(cat({empty({0}), a, zeros({2, 0})}, -1), {1, 2, 3, 4}, 0, "cat skips [0], keeps [2, 0]");
  CHECK(cat({empty({0}), empty({0})}).shape() == Shape{0});
  const Tensor s = stack({a, a * 10.0}, -1);
  CHECK(s.shape() == Shape{2, 2, 2});
  expect_values(s, {1, 10, 2, 20, 3, 30, 4, 40}, 0, "stack dim -1");
  expect_values(stack({a, a * 10.0}), {1, 2, 3, 4, 10, 20, 30, 40}, 0, "stack dim 0");
}

TEST_CASE("slicing gradients scatter, cat's split, permute's permute back", "[slicing][gradcheck]") {
  Tensor x = grid().requires_grad_();
  narrow(x, 1, 1, 2).sum().backward();
  expect_values(x.grad(), {0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0}, 0, "narrow's gradient");
  x.zero_grad();
  (select(x, 0, -1) * from_vector<float>({1, 2, 3, 4}, {4})).sum().backward();
  expect_values(x.grad(), {0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}, 0, "select's gradient");
  x.zero_grad();
  slice(x, 1, 1, INT64_MAX, 2).sum().backward();
  expect_values(x.grad(), {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, 0, "slice's gradient");
  x.zero_grad();
  (x.permute({1, 0}) * arange(0, 12, 1, kFloat32).reshape(Shape{4, 3})).sum().backward();
  expect_values(x.grad(), {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}, 0, "permute's gradient");

  Tensor a = zeros({2, 2}).requires_grad_(), b = zeros({2, 1}).requires_grad_();
  (cat({a, b}, 1) * from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3})).sum().backward();
  expect_values(a.grad(), {1, 2, 4, 5}, 0, "cat's gradient, first part");
  expect_values(b.grad(), {3, 6}, 0, "cat's gradient, second part");
}
