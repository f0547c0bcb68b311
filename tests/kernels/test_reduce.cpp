#include <omp.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include "kernels/ops.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

namespace {

// [[1, -2, 3], [4, 5, -6]]: distinct values, so max has no ties.
Tensor small_matrix(DType dtype = kFloat32) {
  return from_vector<double>({1, -2, 3, 4, 5, -6}, {2, 3}, TensorOptions(dtype));
}

// fp64 reference of a sum or max of x [outer, n, inner] along its middle dim.
std::vector<double> reference_along_middle(const Tensor& x, bool max) {
  const std::vector<double> v = x.to_vector<double>();
  const int64_t outer = x.size(0), n = x.size(1), inner = x.size(2);
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = max ? -INFINITY : 0.0;
      for (int64_t k = 0; k < n; ++k) {
        const double e = v[static_cast<size_t>((o * n + k) * inner + i)];
        acc = max ? std::max(acc, e) : acc + e;
      }
      out.push_back(acc);
    }
  return out;
}

}  // namespace

TEST_CASE("sum, mean and max over all elements match hand-computed values", "[reduce]") {
  Tensor x = small_matrix();
  Tensor s = sum(x);
  CHECK(s.shape() == Shape{});
  CHECK(s.dtype() == DType::f32);
  expect_values(s, {5}, 0, "sum");
  expect_values(mean(x), {5.0 / 6.0}, test::unit_roundoff(kFloat32), "mean");  // an exact sum, one rounding of 5/6
  expect_values(max(x), {5}, 0, "max");
  expect_values(sum(small_matrix(kFloat64)), {5}, 0, "sum f64");
}

TEST_CASE("sum, mean and max along each dim, keepdim and negative dims", "[reduce]") {
  Tensor x = small_matrix();
  expect_values(sum(x, 0), {5, 3, -3}, 0, "sum dim 0");
  expect_values(sum(x, 1), {2, 3}, 0, "sum dim 1");
  expect_values(sum(x, -1), {2, 3}, 0, "sum dim -1");
  expect_values(sum(x, -2), {5, 3, -3}, 0, "sum dim -2");
  expect_values(mean(x, 0), {2.5, 1.5, -1.5}, 0, "mean dim 0");
  expect_values(mean(x, 1), {2.0 / 3.0, 1}, test::unit_roundoff(kFloat32), "mean dim 1");  // one rounding of 2/3
  expect_values(max(x, 0), {4, 5, 3}, 0, "max dim 0");
  expect_values(max(x, -1), {3, 5}, 0, "max dim -1");
  CHECK(sum(x, 0).shape() == Shape{3});
  CHECK(sum(x, 1).shape() == Shape{2});
  CHECK(sum(x, 0, true).shape() == Shape{1, 3});
  CHECK(mean(x, 1, true).shape() == Shape{2, 1});
  CHECK(max(x, -1, true).shape() == Shape{2, 1});
  expect_values(max(x, 1, true), {3, 5}, 0, "max keepdim");
}

TEST_CASE("reductions along the middle dim of 3-D inputs, odd and tiled widths", "[reduce]") {
  // [2, 3, 4] = 0..23: sum over dim 1 at (o, i) is 36o + 12 + 3i, max is 12o + 8 + i.
  Tensor x = arange(0, 24, 1, TensorOptions(kFloat32)).reshape({2, 3, 4});
  expect_values(sum(x, 1), {12, 15, 18, 21, 48, 51, 54, 57}, 0, "sum middle");
  expect_values(max(x, 1), {8, 9, 10, 11, 20, 21, 22, 23}, 0, "max middle");
  expect_values(mean(x, 1), {4, 5, 6, 7, 16, 17, 18, 19}, 0, "mean middle");
  // inner = 133 spans several column tiles with a ragged last one; sizes are odd on purpose.
  Tensor y = randn({3, 5, 133}, kFloat64);
  expect_values(sum(y, 1), reference_along_middle(y, false), 1e-14, "sum tiled");
  expect_values(max(y, 1), reference_along_middle(y, true), 0, "max tiled");
  // against the fp64 sum of the same f32 values: a sum of 5 in any order, relative to the sum of |y|
  Tensor y32 = y.to(kFloat32);
  test::expect_within(sum(y32, 1), reference_along_middle(y32, false),
                      test::sum_error_bound(5, kFloat32, reference_along_middle(abs(y32), false)), "sum tiled f32");
}

TEST_CASE("one-element and 0-d inputs", "[reduce]") {
  Tensor one = full({1}, 2.5);
  expect_values(sum(one), {2.5}, 0, "sum [1]");
  expect_values(mean(one, 0), {2.5}, 0, "mean [1] dim 0");
  expect_values(max(one, 0, true), {2.5}, 0, "max [1] keepdim");
  CHECK(sum(one, 0).shape() == Shape{});
  Tensor s = scalar_tensor(-3.0);
  expect_values(sum(s), {-3}, 0, "sum 0-d");
  expect_values(sum(s, 0), {-3}, 0, "sum 0-d dim 0");
  expect_values(max(s, -1, true), {-3}, 0, "max 0-d dim -1");
  CHECK(sum(s, 0, true).shape() == Shape{});
  CHECK(argmax(s).item<int64_t>() == 0);
  CHECK(argmax(s, 0).item<int64_t>() == 0);
}

TEST_CASE("empty inputs: sum is 0, mean is nan, max throws", "[reduce][errors]") {
  Tensor e = zeros({0, 3});
  expect_values(sum(e), {0}, 0, "sum of empty");
  CHECK(std::isnan(mean(e).item<float>()));
  expect_values(sum(e, 0), {0, 0, 0}, 0, "sum over an empty dim");
  for (float v : mean(e, 0).to_vector<float>()) CHECK(std::isnan(v));
  CHECK(sum(e, 1).shape() == Shape{0});
  CHECK(max(e, 1).shape() == Shape{0});  // reduces a non-empty dim: nothing to do, no error
  expect_error_contains([&] { max(e); }, {"max", "[0, 3]", "empty"});
  expect_error_contains([&] { max(e, 0); }, {"max", "dim 0", "[0, 3]", "empty"});
  expect_error_contains([&] { argmax(e); }, {"argmax", "[0, 3]", "empty"});
}

TEST_CASE("f16 inputs accumulate in fp32 or better", "[reduce][f16]") {
  // 4096 ones: an f16 accumulator stalls at 2048 (2048 + 1 rounds back to 2048).
  Tensor ones_h = ones({4096}, kFloat16);
  Tensor s = sum(ones_h);
  CHECK(s.dtype() == DType::f16);
  expect_values(s, {4096}, 0, "f16 sum");
  expect_values(mean(ones_h), {1}, 0, "f16 mean");
  expect_values(sum(ones({2, 4096}, kFloat16), 1), {4096, 4096}, 0, "f16 sum dim");
  Tensor x = small_matrix(kFloat16);
  expect_values(max(x, 0), {4, 5, 3}, 0, "f16 max dim");
  // an exact sum, 2/3 rounded to f32 (in double, then f32: 2 units), then to f16
  expect_values(mean(x, 1), {2.0 / 3.0, 1}, test::ErrorModel{0, 2, 1}.tolerance(kFloat16), "f16 mean dim");
}

TEST_CASE("f32 sums are accurate and independent of the thread count", "[reduce]") {
  // 2^20 copies of 0.1f: a float accumulator drifts by ~1% (its bound, gamma(2^20) in f32, is 6%).
  // This tests the kernel's documented double accumulator (kernels/cpu/reduce.cpp): gamma(n) in
  // f64 of the sum, then the output's rounding to f32.
  const int64_t n = int64_t{1} << 20;
  Tensor x = full({n}, 0.1);
  const double want = static_cast<double>(n) * static_cast<double>(0.1f);
  test::expect_within(sum(x), {want}, {(test::gamma(n, kFloat64) + test::unit_roundoff(kFloat32)) * want},
                      "f32 sum of 2^20");
  Tensor r = randn({n});
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const float one_thread = sum(r).item<float>();
  const std::vector<float> rows_one = sum(r.reshape({1024, 1024}), 0).to_vector<float>();
  omp_set_num_threads(2);
  const float two_threads = sum(r).item<float>();
  const std::vector<float> rows_two = sum(r.reshape({1024, 1024}), 0).to_vector<float>();
  omp_set_num_threads(threads);
  CHECK(one_thread == two_threads);  // bitwise: the summation order is fixed
  CHECK(rows_one == rows_two);
}

TEST_CASE("argmax returns i64 indices of the first maximum", "[reduce]") {
  Tensor v = from_vector<float>({1, 3, 3, 2}, {4});
  Tensor a = argmax(v);
  CHECK(a.dtype() == DType::i64);
  CHECK(a.shape() == Shape{});
  CHECK(a.item<int64_t>() == 1);
  Tensor m = from_vector<float>({1, 5, 5, 7, 7, 0}, {2, 3});
  CHECK(argmax(m).item<int64_t>() == 3);
  CHECK(argmax(m, 1).to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  CHECK(argmax(m, 0).to_vector<int64_t>() == std::vector<int64_t>{1, 1, 0});
  CHECK(argmax(m, -1, true).shape() == Shape{2, 1});
  CHECK(argmax(from_vector<int64_t>({4, 9, 9}, {3})).item<int64_t>() == 1);  // integers too
  // Rows long enough to be folded in interleaved lanes: the tie at 9 (lane 1) loses to 2 (lane 2).
  std::vector<float> row(40, 0.0f);
  row[9] = row[2] = row[31] = 4.0f;
  row[20 + 9] = row[20 + 2] = 4.0f;
  CHECK(argmax(from_vector<float>(row, {2, 20}), 1).to_vector<int64_t>() == std::vector<int64_t>{2, 2});
  CHECK(argmax(from_vector<float>(row, {40})).item<int64_t>() == 2);
  // Ties across reduce_all's blocks (and threads) keep the earliest one.
  CHECK(argmax(ones({100000})).item<int64_t>() == 0);
  std::vector<float> spikes(100000, 0.0f);
  spikes[50001] = spikes[90000] = 2.0f;
  CHECK(argmax(from_vector<float>(spikes, {100000})).item<int64_t>() == 50001);
}

TEST_CASE("max and argmax propagate NaN like PyTorch", "[reduce]") {
  Tensor x = from_vector<float>({1, NAN, 3}, {3});
  CHECK(std::isnan(max(x).item<float>()));
  CHECK(argmax(x).item<int64_t>() == 1);
  CHECK(std::isnan(max(x.reshape({1, 3}), 1).item<float>()));
}

TEST_CASE("reduction gradients pass gradcheck", "[reduce][gradcheck]") {
  Tensor x = randn({3, 4}, kFloat64);
  Tensor x3 = randn({2, 3, 4}, kFloat64);
  expect_gradcheck([](auto& in) { return sum(in[0]); }, {x}, "sum");
  expect_gradcheck([](auto& in) { return mean(in[0]); }, {x}, "mean");
  expect_gradcheck([](auto& in) { return sum(in[0], 0); }, {x}, "sum dim 0");
  expect_gradcheck([](auto& in) { return sum(in[0], -1, true); }, {x}, "sum dim -1 keepdim");
  expect_gradcheck([](auto& in) { return mean(in[0], 1); }, {x3}, "mean middle dim");
  expect_gradcheck([](auto& in) { return mean(in[0], 0, true); }, {x}, "mean dim 0 keepdim");
  // Distinct values at least 0.1 apart (far beyond gradcheck's 1e-6 step): no ties for max.
  Tensor d = from_vector<double>({0.3, -1.2, 2.5, 0.9, -0.4, 1.7, -2.2, 0.1, 1.1, -0.8, 2.0, 0.6}, {3, 4});
  Tensor d3 = d.reshape({2, 3, 2});
  expect_gradcheck([](auto& in) { return max(in[0]); }, {d}, "max");
  expect_gradcheck([](auto& in) { return max(in[0], 0); }, {d}, "max dim 0");
  expect_gradcheck([](auto& in) { return max(in[0], 1, true); }, {d}, "max dim 1 keepdim");
  expect_gradcheck([](auto& in) { return max(in[0], 1); }, {d3}, "max middle dim");
}

TEST_CASE("max sends the whole gradient to the first maximum", "[reduce]") {
  Tensor x = from_vector<float>({1, 3, 3, 2, 2, 0}, {2, 3}).requires_grad_();
  sum(max(x, 1)).backward();
  expect_values(x.grad(), {0, 1, 0, 1, 0, 0}, 0, "max dim grad with ties");
  Tensor y = from_vector<float>({4, 1, 4}, {3}).requires_grad_();
  max(y).backward();
  expect_values(y.grad(), {1, 0, 0}, 0, "max all grad with ties");
}

TEST_CASE("reduction argument errors name the op", "[reduce][errors]") {
  Tensor x = small_matrix();
  expect_error_contains([&] { sum(x, 2); }, {"sum", "dim 2", "[2, 3]"});
  expect_error_contains([&] { max(x, -3); }, {"max", "dim -3", "[2, 3]"});
  expect_error_contains([&] { mean(zeros({2}, kInt64)); }, {"mean", "floating", "i64"});
  Tensor bad_index = from_vector<int64_t>({0, 3}, {2, 1});
  expect_error_contains([&] { kernels::scatter_dim(ones({2, 1}), bad_index, Shape{2, 3}, 1); },
                        {"scatter_dim", "index 3", "at [1, 0]", "dim 1 of [2, 3]", "0 <= index < 3"});
  expect_error_contains(
      [&] { kernels::scatter_dim(ones({1, 2}), from_vector<int64_t>({0, -1}, {1, 2}), Shape{4, 2}, 0); },
      {"scatter_dim", "index -1", "at [0, 1]", "0 <= index < 4"});
  expect_error_contains([&] { kernels::scatter_dim(ones({2, 2}), zeros({2, 2}, kInt64), Shape{2, 3}, 1); },
                        {"scatter_dim", "[2, 2]", "[2, 3]", "dim 1"});
}

TEST_CASE("reduction CPU perf sanity (timings printed, not asserted)", "[reduce][perf]") {
  Tensor x = ones({2048, 2048});
  auto time_ms = [](auto&& fn) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  Tensor all, rows, cols;
  const double t_all = time_ms([&] { all = sum(x); });
  const double t_rows = time_ms([&] { rows = sum(x, 1); });
  const double t_cols = time_ms([&] { cols = sum(x, 0); });
  const double t_max = time_ms([&] { max(x, 0); });
  std::cout << "[reduce perf] 2048x2048 f32: sum all " << t_all << " ms, sum dim 1 " << t_rows << " ms, sum dim 0 "
            << t_cols << " ms, max dim 0 " << t_max << " ms\n";
  expect_values(all, {2048.0 * 2048.0}, 0, "perf sum all");
  expect_values(rows, std::vector<double>(2048, 2048.0), 0, "perf sum dim 1");
  expect_values(cols, std::vector<double>(2048, 2048.0), 0, "perf sum dim 0");
}
