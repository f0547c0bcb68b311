// CUDA vs CPU for the elementwise kernels (kernels/cuda/elementwise.cu, cast.cu,
// optim.cu) and one full forward + backward on the GPU. Skipped without a GPU.
//
// Tolerances: add/sub/mul/div and casts are correctly rounded on both sides, so
// those compare exactly (0). Transcendentals come from different math libraries
// (glibc vs CUDA's, a few ulp apart) and nvcc may fuse a multiply-add the CPU
// build does not: kF32Tol. f16 outputs are rounded to half after fp32 math; one
// fp32 ulp can flip that rounding by one half ulp (2^-11 relative): kF16Tol.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "tests/support/op_contract.h"

using namespace ember;
using kernels::BinaryOp;
using kernels::UnaryOp;
using test::expect_close;
using test::expect_error_contains;
using test::expect_matches_cpu;
using test::expect_values;

namespace {

constexpr double kF32Tol = 1e-5;
constexpr double kF16Tol = 2e-3;
const std::vector<int64_t> kSizes = {1, 7, 1000003, 0};
const std::vector<DType> kFloatTypes = {kFloat32, kFloat16};

double tol_for(DType dtype) { return dtype == kFloat16 ? kF16Tol : kF32Tol; }

std::string label(const std::string& op, DType dtype, const Shape& shape) {
  return op + " " + dtype_name(dtype) + " " + shape.str();
}

// Every op of the table (core/unary_ops.def): a new line there is compared here too.
const std::vector<UnaryOp> kUnaryOps = {
#define EMBER_UNARY_OP(name, forward, derivative, saves) UnaryOp::name,
#define EMBER_UNARY_OP_PUBLIC EMBER_UNARY_OP
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
};
const std::vector<BinaryOp> kBinaryOps = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div};

bool needs_positive(UnaryOp op) { return op == UnaryOp::log || op == UnaryOp::sqrt || op == UnaryOp::pow; }

constexpr double kExponent = 2.5;  // pow's exponent: not an integer, so pow's general path runs

}  // namespace

EMBER_CUDA_TEST_CASE("unary forward and backward match the CPU", "[elementwise]") {
  for (DType dtype : kFloatTypes) {
    for (int64_t n : kSizes) {
      const Tensor mixed = rand({n}, TensorOptions(dtype), -3.0, 3.0);
      const Tensor positive = rand({n}, TensorOptions(dtype), 0.1, 3.0);
      const Tensor dy = randn({n}, TensorOptions(dtype));
      for (UnaryOp op : kUnaryOps) {
        const Tensor& x = needs_positive(op) ? positive : mixed;
        const std::string name = label(kernels::unary_op_name(op), dtype, x.shape());
        expect_matches_cpu([op](auto& in) { return kernels::unary(op, in[0], kExponent); }, {x}, tol_for(dtype), name);
        const Tensor y = kernels::unary(op, x, kExponent);
        expect_matches_cpu([op](auto& in) { return kernels::unary_backward(op, in[0], in[1], in[2], kExponent); },
                           {x, y, dy}, tol_for(dtype), name + " backward");
      }
    }
  }
}

EMBER_CUDA_TEST_CASE("binary ops broadcast like the CPU", "[elementwise]") {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{7}, {7}},          {{2, 3}, {3}},          {{2, 1}, {1, 3}},     {{4, 1, 5}, {3, 1}},
      {{}, {5, 7}},        {{1}, {1}},             {{0, 3}, {3}},        {{1000003}, {1}},
      {{1, 1000003}, {3, 1}}, {{2, 1, 3, 1, 2, 1, 2, 1}, {1, 2, 1, 3, 1, 2, 1, 2}},  // 8 dims: the limit
  };
  for (DType dtype : kFloatTypes) {
    for (const auto& [sa, sb] : cases) {
      const Tensor a = randn(sa, TensorOptions(dtype));
      const Tensor b = rand(sb, TensorOptions(dtype), 0.5, 2.0);  // away from 0: div stays finite
      for (BinaryOp op : kBinaryOps) {
        const std::string name = label(kernels::binary_op_name(op), dtype, sa) + " with " + sb.str();
        expect_matches_cpu([op](auto& in) { return kernels::binary(op, in[0], in[1]); }, {a, b}, 0, name);
        expect_matches_cpu([op](auto& in) { return kernels::binary(op, in[1], in[0]); }, {a, b}, 0, name + " swapped");
      }
    }
  }
}

EMBER_CUDA_TEST_CASE("binary ops on integers and scalars match the CPU", "[elementwise]") {
  const Tensor i = arange(-6, 6).reshape({3, 4});
  const Tensor row = arange(1, 5);
  for (BinaryOp op : kBinaryOps)
    expect_matches_cpu([op](auto& in) { return kernels::binary(op, in[0], in[1]); }, {i, row}, 0,
                       std::string("i64 ") + kernels::binary_op_name(op));
  expect_values(kernels::binary(BinaryOp::mul, i.to(kCUDA), row.to(kCUDA)).reshape({12}),
                {-6, -10, -12, -12, -2, -2, 0, 4, 2, 6, 12, 20}, 0, "i64 mul on cuda");
  for (DType dtype : kFloatTypes) {
    for (int64_t n : kSizes) {
      const Tensor a = rand({n}, TensorOptions(dtype), 0.5, 2.0);
      for (BinaryOp op : kBinaryOps) {
        for (bool scalar_first : {false, true}) {
          const std::string name = label(std::string(scalar_first ? "scalar " : "") + kernels::binary_op_name(op),
                                         dtype, a.shape());
          expect_matches_cpu([=](auto& in) { return kernels::binary_scalar(op, in[0], 1.75, scalar_first); }, {a},
                             0, name);
        }
      }
    }
  }
}

EMBER_CUDA_TEST_CASE("binary errors name the op and the dim limit", "[elementwise][errors]") {
  const Tensor a = zeros({2, 1, 1, 1, 1, 1, 1, 1, 1}, TensorOptions(kCUDA));
  const Tensor b = zeros({1, 2, 1, 1, 1, 1, 1, 1, 1}, TensorOptions(kCUDA));
  expect_error_contains([&] { kernels::binary(BinaryOp::add, a, b); }, {"add", "at most 8 dims", "9"});
}

EMBER_CUDA_TEST_CASE("sum_to and expand match the CPU", "[elementwise]") {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3}, {3}},       {{2, 3}, {2, 1}},  {{4, 3, 5}, {3, 1}}, {{4, 3, 5}, {}},       {{4, 3, 5}, {4, 1, 5}},
      {{0, 3}, {3}},       {{2, 0}, {2, 1}},  {{1000003}, {1}},    {{5000, 7}, {7}},      {{7, 5000}, {7, 1}},
      {{3, 5000}, {5000}}, {{1, 1}, {1}},
  };
  for (DType dtype : kFloatTypes) {
    for (const auto& [big, small] : cases) {
      const Tensor x = rand(big, TensorOptions(dtype), -1.0, 1.0);
      const Tensor s = rand(small, TensorOptions(dtype), -1.0, 1.0);
      // sum_to adds up to 1000003 terms in another order than the CPU's sequential fp32 loop (the
      // difference grows with sqrt(n)); in f16 that can also flip the final rounding of a sum below
      // 2048 by one half ulp (<= 1 / 1025 relative).
      const double sum_tol = big.numel() > 100000 ? (dtype == kFloat16 ? 3e-3 : 1e-3) : tol_for(dtype);
      expect_matches_cpu([small = small](auto& in) { return kernels::sum_to(in[0], small); }, {x}, sum_tol,
                         label("sum_to", dtype, big) + " -> " + small.str());
      expect_matches_cpu([big = big](auto& in) { return kernels::expand(in[0], big); }, {s}, 0,
                         label("expand", dtype, small) + " -> " + big.str());
    }
  }
  // Hand-computed on the GPU: column sums of [[1, 2, 3], [4, 5, 6]] and the expand back.
  const Tensor m = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}, TensorOptions(kCUDA));
  expect_values(kernels::sum_to(m, {3}), {5, 7, 9}, 0, "sum_to columns");
  expect_values(kernels::sum_to(m, {2, 1}), {6, 15}, 0, "sum_to rows");
  expect_values(kernels::expand(from_vector<int64_t>({7, 8}, {2, 1}, TensorOptions(kInt64).device(kCUDA)), {2, 3}),
                {7, 7, 7, 8, 8, 8}, 0, "expand i64");
}

EMBER_CUDA_TEST_CASE("casts and copies between dtypes and devices match the CPU", "[elementwise][cast]") {
  const std::vector<DType> all = {kFloat32, kFloat64, kFloat16, kInt64, kUInt8};
  // Integers 0..200 are exact in every dtype, fractional values exercise rounding and truncation.
  const Tensor integers = kernels::cast(rand({1000003}, {}, 0.0, 200.0), kInt64);
  const Tensor fractional = rand({1003}, {}, -100.0, 100.0);
  for (DType from : all) {
    const Tensor src = kernels::cast(integers, from);
    for (DType to : all) {
      const std::string name = std::string("cast ") + dtype_name(from) + " -> " + dtype_name(to);
      expect_matches_cpu([to](auto& in) { return kernels::cast(in[0], to); }, {src}, 0, name);
    }
  }
  for (DType to : {kFloat64, kFloat16, kInt64})  // float -> int truncates toward zero on both
    expect_matches_cpu([to](auto& in) { return kernels::cast(in[0], to); }, {fractional}, 0,
                       std::string("cast fractional f32 -> ") + dtype_name(to));

  const Tensor host = rand({1000003}, {}, 0.0, 200.0);  // non-negative and < 256: defined for u8 too
  for (DType to : all) {
    const std::string name = std::string("copy_ f32 -> ") + dtype_name(to);
    Tensor on_gpu = empty(host.shape(), TensorOptions(to).device(kCUDA));
    kernels::copy_(on_gpu, host);  // host -> device, converting on the GPU when dtypes differ
    expect_close(on_gpu.to(kCPU), kernels::cast(host, to), 0, name + " host->device");
    Tensor device_copy = empty(host.shape(), TensorOptions(kFloat32).device(kCUDA));
    kernels::copy_(device_copy, on_gpu);  // device -> device
    Tensor back = empty(host.shape(), TensorOptions(kFloat64));
    kernels::copy_(back, on_gpu);  // device -> host with a conversion
    expect_close(device_copy.to(kCPU), kernels::cast(kernels::cast(host, to), kFloat32), 0, name + " device->device");
    expect_close(back, kernels::cast(kernels::cast(host, to), kFloat64), 0, name + " device->host");
  }
  const Tensor none = zeros({0, 4}, TensorOptions(kCUDA));
  CHECK(none.to(kCPU).numel() == 0);
  CHECK(kernels::cast(none, kFloat16).shape() == Shape{0, 4});
}

EMBER_CUDA_TEST_CASE("fill_, add_ and mul_ match the CPU", "[elementwise]") {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kInt64, kUInt8}) {
    // The 1-element input only carries the device into fn.
    const Tensor carrier = zeros({1});
    expect_matches_cpu([dtype](auto& in) { return full({1000003}, 3.75, TensorOptions(dtype).device(in[0].device())); },
                       {carrier}, 0, std::string("fill_ ") + dtype_name(dtype));
  }
  for (DType dtype : kFloatTypes) {
    for (int64_t n : kSizes) {
      const Tensor dst = randn({n}, TensorOptions(dtype));
      const Tensor src = randn({n}, TensorOptions(dtype));
      expect_matches_cpu(
          [](auto& in) {
            Tensor t = in[0].clone();
            kernels::add_(t, in[1], -0.375);
            return t;
          },
          {dst, src}, tol_for(dtype), label("add_", dtype, dst.shape()));
      expect_matches_cpu(
          [](auto& in) {
            Tensor t = in[0].clone();
            kernels::mul_scalar_(t, 1.5);
            return t;
          },
          {dst}, 0, label("mul_", dtype, dst.shape()));
    }
  }
}

EMBER_CUDA_TEST_CASE("an SGD step on CUDA equals the CPU step", "[elementwise][optim]") {
  const std::vector<kernels::SgdOptions> configs = {
      {0.1, 0.0, 0.0, 0.0, false},   // plain
      {0.05, 0.9, 0.1, 1e-2, false}, // momentum, dampening, weight decay
      {0.05, 0.9, 0.0, 1e-2, true},  // Nesterov
  };
  for (DType dtype : kFloatTypes) {
    for (int64_t n : {int64_t{7}, int64_t{1000003}}) {
      const Tensor param = randn({n}, TensorOptions(dtype));
      const Tensor grad = randn({n}, TensorOptions(dtype));
      const Tensor buffer = randn({n}, TensorOptions(dtype));
      for (const kernels::SgdOptions& o : configs) {
        for (bool first_step : {true, false}) {
          // Each returns one of the two updated tensors: the parameter (which = 0) or the buffer (which = 1).
          for (int which : {0, 1}) {
            if (which == 1 && o.momentum == 0.0) continue;
            const Tensor buf = o.momentum != 0.0 ? buffer : Tensor();
            const std::string name = label(which == 0 ? "sgd param" : "sgd buffer", dtype, param.shape()) +
                                     (o.nesterov ? " nesterov" : "") + (first_step ? " first" : "");
            expect_matches_cpu(
                [=](auto& in) {
                  Tensor p = in[0].clone();
                  Tensor b = in[2].defined() ? in[2].clone() : Tensor();
                  kernels::sgd_step_(p, in[1], b, o, first_step);
                  return which == 0 ? p : b;
                },
                {param, grad, buf}, tol_for(dtype), name);
          }
        }
      }
    }
  }
}

EMBER_CUDA_TEST_CASE("a forward and backward pass on CUDA gives the CPU gradients", "[elementwise][autograd]") {
  const Tensor x = randn({4, 5});
  const Tensor w = rand({5}, {}, 0.5, 1.5);
  const Tensor b = randn({4, 1});
  // loss = mean(sigmoid(x * w + b)^2 - exp(-|x|) / (1 + relu(x)) + sqrt(w) * tanh(x))
  auto grad_of = [](int input) {
    return [input](const std::vector<Tensor>& in) {
      std::vector<Tensor> leaves;
      for (const Tensor& t : in) leaves.push_back(t.detach().requires_grad_());
      const Tensor& lx = leaves[0];
      const Tensor& lw = leaves[1];
      const Tensor& lb = leaves[2];
      const Tensor h = pow(sigmoid(lx * lw + lb), 2.0) - exp(neg(abs(lx))) / (1.0 + relu(lx)) + sqrt(lw) * tanh(lx);
      mean(h).backward();
      return leaves[static_cast<size_t>(input)].grad();
    };
  };
  expect_matches_cpu(grad_of(0), {x, w, b}, kF32Tol, "dloss/dx");
  expect_matches_cpu(grad_of(1), {x, w, b}, kF32Tol, "dloss/dw (summed over a broadcast dim)");
  expect_matches_cpu(grad_of(2), {x, w, b}, kF32Tol, "dloss/db (summed over a broadcast dim)");
}
