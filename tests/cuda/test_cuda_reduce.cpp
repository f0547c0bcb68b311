// CUDA vs CPU for the reductions (kernels/cuda/reduce.cu): sum/mean/max over
// everything and along a dim, argmax (first maximum on ties) and scatter_dim.
// Skipped without a GPU.
//
// Most inputs are small integers (-5..5): every partial sum is then exact in
// fp32 whatever the order, so CUDA's tree order and the CPU's loop must agree
// exactly (tolerance 0) and the many ties test "first maximum". Random inputs
// add a tolerance for the summation order: kOrderTol.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "tests/support/op_contract.h"

using namespace ember;
using kernels::ReduceOp;
using test::expect_error_contains;
using test::expect_matches_cpu;
using test::expect_values;

namespace {

// Float sums of up to 1e6 terms in two orders differ by ~sqrt(n) ulps of the total.
constexpr double kOrderTol = 1e-4;

// x[i] = (7 i + 3) mod 11 - 5: integers in [-5, 5], each value repeated every 11 elements.
Tensor small_integers(const Shape& shape, DType dtype) {
  std::vector<float> values(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(static_cast<int64_t>((7 * i + 3) % 11) - 5);
  return from_vector<float>(values, shape, TensorOptions(dtype));
}

const std::vector<ReduceOp> kOps = {ReduceOp::sum, ReduceOp::mean, ReduceOp::max};
const char* op_name(ReduceOp op) { return op == ReduceOp::sum ? "sum" : op == ReduceOp::mean ? "mean" : "max"; }

std::string label(const std::string& op, DType dtype, const Shape& shape, int64_t dim = -100) {
  return op + " " + dtype_name(dtype) + " " + shape.str() + (dim == -100 ? "" : " dim " + std::to_string(dim));
}

// Shapes that reach every path of reduce_dim: one block per row (inner == 1 or few rows),
// one thread per row (many rows, inner > 1), 1-element, odd and 0-d shapes.
const std::vector<Shape> kDimShapes = {{7},       {1},          {3, 5, 7}, {1000003},   {1001, 999},
                                       {64, 5000}, {5000, 3, 2}, {1, 1, 1}, {2, 1000003}};

}  // namespace

EMBER_CUDA_TEST_CASE("reductions over everything match the CPU", "[reduce]") {
  for (DType dtype : {kFloat32, kFloat16}) {
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000003}}) {
      const Tensor x = small_integers({n}, dtype);
      for (ReduceOp op : kOps) {
        const std::string name = label(op_name(op), dtype, x.shape());
        // The mean divides an exact sum once; only the final rounding can differ (f16: 1 half ulp).
        const double tol = op == ReduceOp::mean ? (dtype == kFloat16 ? 1e-3 : 1e-7) : 0;
        expect_matches_cpu([op](auto& in) { return kernels::reduce_all(op, in[0]); }, {x}, tol, name);
      }
    }
  }
  const Tensor r = rand({1000003}, {}, 0.0, 1.0);
  for (ReduceOp op : kOps)
    expect_matches_cpu([op](auto& in) { return kernels::reduce_all(op, in[0]); }, {r}, kOrderTol,
                       label(op_name(op), kFloat32, r.shape()) + " random");
  // Hand-computed on the GPU: the pattern sums to 0 over every 11 elements.
  const Tensor x = small_integers({1000003}, kFloat32).to(kCUDA);
  const Tensor total = kernels::reduce_all(ReduceOp::sum, x);
  CHECK(total.is_cuda());  // the result stays on the device
  CHECK(total.dim() == 0);
  double expected = 0;
  for (int64_t i = 1000003 / 11 * 11; i < 1000003; ++i) expected += static_cast<double>((7 * i + 3) % 11 - 5);
  expect_values(total, {expected}, 0, "sum of the pattern");
  expect_values(kernels::reduce_all(ReduceOp::max, x), {5}, 0, "max of the pattern");
}

EMBER_CUDA_TEST_CASE("reductions of empty tensors", "[reduce]") {
  const Tensor none = zeros({0}, TensorOptions(kCUDA));
  expect_values(kernels::reduce_all(ReduceOp::sum, none), {0}, 0, "sum of nothing");
  CHECK(std::isnan(kernels::reduce_all(ReduceOp::mean, none).item<float>()));  // 0 / 0, as on the CPU
  expect_error_contains([&] { kernels::reduce_all(ReduceOp::max, none); }, {"max", "empty"});
  const Tensor rows = zeros({2, 0, 3}, TensorOptions(kCUDA));
  expect_values(kernels::reduce_dim(ReduceOp::sum, rows, 1, false), {0, 0, 0, 0, 0, 0}, 0, "sum over an empty dim");
  for (ReduceOp op : kOps) {
    const Tensor out = kernels::reduce_dim(op, rows, 0, true);
    CHECK(out.shape() == Shape{1, 0, 3});
  }
  expect_error_contains([&] { kernels::reduce_dim(ReduceOp::max, rows, 1, false); }, {"max", "empty"});
}

EMBER_CUDA_TEST_CASE("reductions along a dim match the CPU", "[reduce]") {
  for (DType dtype : {kFloat32, kFloat16}) {
    for (const Shape& shape : kDimShapes) {
      const Tensor x = small_integers(shape, dtype);
      for (int64_t dim = 0; dim < shape.dim(); ++dim) {
        for (ReduceOp op : kOps) {
          for (bool keepdim : {false, true}) {
            const double tol = op == ReduceOp::mean ? (dtype == kFloat16 ? 1e-3 : 1e-7) : 0;
            expect_matches_cpu([=](auto& in) { return kernels::reduce_dim(op, in[0], dim, keepdim); }, {x}, tol,
                               label(op_name(op), dtype, shape, dim) + (keepdim ? " keepdim" : ""));
          }
        }
      }
    }
  }
  const Tensor r = rand({300, 70, 9}, {}, -1.0, 1.0);
  for (int64_t dim : {0, 1, 2, -1})
    for (ReduceOp op : kOps)
      expect_matches_cpu([=](auto& in) { return kernels::reduce_dim(op, in[0], dim, false); }, {r}, kOrderTol,
                         label(op_name(op), kFloat32, r.shape(), dim) + " random");
  const Tensor scalar = scalar_tensor(2.5);
  expect_matches_cpu([](auto& in) { return kernels::reduce_dim(ReduceOp::mean, in[0], 0, false); }, {scalar}, 0,
                     "mean of a 0-d tensor");
  // Hand-computed on the GPU.
  const Tensor m = from_vector<float>({1, 6, 3, 4, 5, 2}, {2, 3}, TensorOptions(kCUDA));
  expect_values(kernels::reduce_dim(ReduceOp::sum, m, 0, false), {5, 11, 5}, 0, "sum dim 0");
  expect_values(kernels::reduce_dim(ReduceOp::mean, m, 1, false), {10.0 / 3, 11.0 / 3}, 1e-7, "mean dim 1");
  expect_values(kernels::reduce_dim(ReduceOp::max, m, 1, true), {6, 5}, 0, "max dim 1");
  CHECK(kernels::reduce_dim(ReduceOp::max, m, 1, true).shape() == Shape{2, 1});
}

EMBER_CUDA_TEST_CASE("argmax returns the first maximum like the CPU", "[reduce][argmax]") {
  for (DType dtype : {kFloat32, kFloat16, kInt64, kUInt8}) {
    for (const Shape& shape : kDimShapes) {
      // u8 cannot hold the negative values: shift the pattern to 0..10.
      const Tensor x = dtype == kUInt8 ? kernels::cast(kernels::binary_scalar(kernels::BinaryOp::add,
                                                                               small_integers(shape, kFloat32), 5, false),
                                                       kUInt8)
                                       : small_integers(shape, dtype);
      expect_matches_cpu([](auto& in) { return kernels::argmax_all(in[0]); }, {x}, 0,
                         label("argmax", dtype, shape));
      for (int64_t dim = 0; dim < shape.dim(); ++dim)
        for (bool keepdim : {false, true})
          expect_matches_cpu([=](auto& in) { return kernels::argmax_dim(in[0], dim, keepdim); }, {x}, 0,
                             label("argmax", dtype, shape, dim) + (keepdim ? " keepdim" : ""));
    }
  }
  // Two equal maxima far apart, in different blocks: the first one wins.
  std::vector<float> values(1000003, -1.0f);
  values[700001] = 9.0f;
  values[900001] = 9.0f;
  const Tensor far = from_vector<float>(values, {1000003}, TensorOptions(kCUDA));
  expect_values(kernels::argmax_all(far), {700001}, 0, "argmax first of two maxima");
  const Tensor m = from_vector<float>({1, 3, 3, 2, 2, 1}, {2, 3}, TensorOptions(kCUDA));
  expect_values(kernels::argmax_dim(m, 1, false), {1, 0}, 0, "argmax ties along dim 1");
  expect_values(kernels::argmax_dim(m, 0, false), {1, 0, 0}, 0, "argmax ties along dim 0");
  CHECK(kernels::argmax_all(m).dtype() == kInt64);
  CHECK(kernels::argmax_all(m).is_cuda());
}

EMBER_CUDA_TEST_CASE("scatter_dim and max's gradient match the CPU", "[reduce][scatter]") {
  for (DType dtype : {kFloat32, kFloat16}) {
    for (const Shape& shape : {Shape{3, 5, 4}, Shape{7}, Shape{64, 5000}, Shape{1, 1}}) {
      const Tensor x = randn(shape, TensorOptions(dtype));
      for (int64_t dim = 0; dim < shape.dim(); ++dim) {
        const Tensor indices = kernels::argmax_dim(x, dim, true);
        const Tensor dy = randn(indices.shape(), TensorOptions(dtype));
        expect_matches_cpu([&](auto& in) { return kernels::scatter_dim(in[0], in[1], shape, dim); }, {dy, indices}, 0,
                           label("scatter_dim", dtype, shape, dim));
        expect_matches_cpu(
            [dim](auto& in) {
              Tensor leaf = in[0].detach().requires_grad_();
              sum(max(leaf, dim, false)).backward();
              return leaf.grad();
            },
            {x}, 0, label("max backward", dtype, shape, dim));
      }
    }
  }
  const Tensor dy = from_vector<float>({10, 20}, {2, 1}, TensorOptions(kCUDA));
  const Tensor idx = from_vector<int64_t>({2, 0}, {2, 1}, TensorOptions(kInt64).device(kCUDA));
  expect_values(kernels::scatter_dim(dy, idx, {2, 3}, 1), {0, 0, 10, 20, 0, 0}, 0, "scatter_dim by hand");
}

EMBER_CUDA_TEST_CASE("scatter_dim rejects an out-of-range index like the CPU", "[reduce][scatter][errors]") {
  // It used to skip the index on CUDA where the CPU threw: one check in the entry point now.
  const Tensor dy = from_vector<float>({10, 20}, {2, 1}, TensorOptions(kCUDA));
  const Tensor idx = from_vector<int64_t>({2, 3}, {2, 1}, TensorOptions(kInt64).device(kCUDA));
  expect_error_contains([&] { kernels::scatter_dim(dy, idx, {2, 3}, 1); },
                        {"scatter_dim", "index 3", "at [1, 0]", "dim 1 of [2, 3]", "0 <= index < 3"});
  // find_out_of_range itself: the smallest bad position wins among many threads' hits.
  const int64_t n = 1 << 20;
  std::vector<int64_t> values(static_cast<size_t>(n), 1);
  for (int64_t at : {900000, 600000, 123457, 123459}) values[static_cast<size_t>(at)] = at % 2 ? -5 : 9;
  const Tensor big = from_vector<int64_t>(values, {n}, TensorOptions(kInt64).device(kCUDA));
  const kernels::OutOfRange r = kernels::find_out_of_range(big, 4);
  CHECK(r.position == 123457);
  CHECK(r.value == -5);
  CHECK_FALSE(kernels::find_out_of_range(from_vector<int64_t>({0, 3}, {2}).to(kCUDA), 4).found());
  // No sticky CUDA state after the error.
  const Tensor good = from_vector<int64_t>({2, 0}, {2, 1}, TensorOptions(kInt64).device(kCUDA));
  expect_values(kernels::scatter_dim(dy, good, {2, 3}, 1), {0, 0, 10, 20, 0, 0}, 0, "scatter_dim after an error");
}
