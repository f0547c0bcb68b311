#include <string>
#include <utility>
#include <vector>

#include "kernels/ops.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

namespace {

using DimPairs = std::vector<std::pair<int64_t, int64_t>>;

// y[..i..j..] = x[..j..i..] by walking every output multi-index: the oracle.
std::vector<double> naive_transpose(const Tensor& x, int64_t d0, int64_t d1) {
  const std::vector<double> v = x.to_vector<double>();
  std::vector<int64_t> out_sizes = x.shape().sizes();
  std::swap(out_sizes[static_cast<size_t>(d0)], out_sizes[static_cast<size_t>(d1)]);
  const std::vector<int64_t> in_strides = x.shape().strides();
  std::vector<double> out(v.size());
  std::vector<int64_t> index(out_sizes.size(), 0);
  for (size_t flat = 0; flat < out.size(); ++flat) {
    std::vector<int64_t> src = index;
    std::swap(src[static_cast<size_t>(d0)], src[static_cast<size_t>(d1)]);
    int64_t offset = 0;
    for (size_t d = 0; d < src.size(); ++d) offset += src[d] * in_strides[d];
    out[flat] = v[static_cast<size_t>(offset)];
    for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {  // next index, last dim fastest
      if (++index[static_cast<size_t>(d)] < out_sizes[static_cast<size_t>(d)]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

void check_transpose(const Tensor& x, int64_t d0, int64_t d1) {
  const std::string name = "transpose " + x.shape().str() + " (" + std::to_string(d0) + ", " + std::to_string(d1) + ")";
  Tensor y = kernels::transpose(x, d0, d1);
  std::vector<int64_t> sizes = x.shape().sizes();
  std::swap(sizes[static_cast<size_t>(d0)], sizes[static_cast<size_t>(d1)]);
  CHECK(y.shape() == Shape(sizes));
  CHECK(y.dtype() == x.dtype());
  expect_values(y, naive_transpose(x, d0, d1), 0, name);  // a permutation: exact
}

}  // namespace

TEST_CASE("transpose of a matrix matches hand-written values", "[transpose]") {
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x.t();
  CHECK(y.shape() == Shape{3, 2});
  expect_values(y, {1, 4, 2, 5, 3, 6}, 0, "transpose 2x3");
  expect_values(transpose(x, -1, -2), {1, 4, 2, 5, 3, 6}, 0, "transpose negative dims");
  CHECK_FALSE(y.shares_storage(x));
}

TEST_CASE("transpose of every pair of dims matches the index oracle", "[transpose]") {
  // 70 x 45 spans several 32 x 32 tiles with ragged edges; the 4-D case has mid and inner runs.
  check_transpose(randn({70, 45}), 0, 1);
  check_transpose(randn({3, 40, 33}), 1, 2);
  Tensor x3 = randn({3, 37, 5});
  for (auto [d0, d1] : DimPairs{{0, 1}, {0, 2}, {1, 2}, {2, 0}, {1, 1}}) check_transpose(x3, d0, d1);
  Tensor x4 = randn({2, 3, 4, 5});
  for (auto [d0, d1] : DimPairs{{0, 2}, {1, 3}, {0, 3}, {2, 3}}) check_transpose(x4, d0, d1);
}

TEST_CASE("transpose works for every dtype", "[transpose]") {
  check_transpose(randn({5, 6, 7}, kFloat64), 0, 2);
  check_transpose(randn({5, 6, 7}).to(kFloat16), 1, 2);
  check_transpose(arange(0, 210).reshape(Shape{5, 6, 7}), 0, 1);
  check_transpose(arange(0, 200, 1, kUInt8).reshape(Shape{40, 5}), 0, 1);
}

TEST_CASE("transpose of 1-element, empty and same-dim tensors", "[transpose]") {
  Tensor one = full({1, 1, 1}, 4.0);
  expect_values(transpose(one, 0, 2), {4}, 0, "1 element");
  Tensor e = kernels::transpose(zeros({0, 3}), 0, 1);
  CHECK(e.shape() == Shape{3, 0});
  Tensor x = randn({2, 3});
  Tensor same = transpose(x, 1, 1);  // still a new tensor: everything but reshape materialises
  CHECK_FALSE(same.shares_storage(x));
  expect_close(same, x, 0, "transpose(x, 1, 1)");
}

TEST_CASE("transpose gradients pass gradcheck", "[transpose][gradcheck]") {
  Tensor x = randn({2, 3, 4}, kFloat64);
  expect_gradcheck([](auto& in) { return transpose(in[0], 0, 2); }, {x}, "transpose (0, 2)");
  expect_gradcheck([](auto& in) { return transpose(in[0], 1, 2); }, {x}, "transpose (1, 2)");
  // A transpose feeding a matmul: the gradient must be transposed back.
  expect_gradcheck([](auto& in) { return matmul(transpose(in[0], 1, 2), in[1]); },
                   {x, randn({3, 2}, kFloat64)}, "transpose then matmul");
}

TEST_CASE("transpose errors name the op and the dim", "[transpose][errors]") {
  expect_error_contains([] { transpose(zeros({2, 3}), 0, 2); }, {"transpose", "dim 2", "[2, 3]"});
  expect_error_contains([] { transpose(zeros({2, 3}), -3, 0); }, {"transpose", "dim -3", "[2, 3]"});
}
