// Differential tests: the CUDA softmax family and cross entropy against the CPU
// reference (kernels/cuda/softmax.cu vs kernels/cpu/softmax.cpp), forward and
// backward. Skipped at run time without a GPU; always compiled.
//
// Tolerances (expect_close: |cuda - cpu| <= tol * (1 + |cpu|)):
//   f64: both sides run the same formulas in fp64; only the order of the row sums
//        differs (a tree on the GPU), ~1e-16 per term, so 1e-12.
//   f32: CUDA's expf/logf are within 2 ulp of glibc's and the row sums run in
//        another order: a few 1e-7 relative, so 1e-5.
//   f16: outputs are one f16 rounding of fp32 results that agree to ~1e-6, so they
//        differ by at most one f16 ulp (2^-11 ~ 4.9e-4 relative): 1e-3.
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "tests/support/op_contract.h"

using namespace ember;
using test::expect_error_contains;
using test::expect_matches_cpu;
using test::expect_values;

namespace {

constexpr double kTolF64 = 1e-12;
constexpr double kTolF32 = 1e-5;
constexpr double kTolF16 = 1e-3;

double tolerance(DType dtype) { return dtype == kFloat64 ? kTolF64 : dtype == kFloat32 ? kTolF32 : kTolF16; }

// (shape, dim) pairs that reach both CUDA paths: a block per row (inner = 1, or
// fewer than 4096 rows) and a thread per row ([4, 3, 40, 50] along dim 1 has
// 8000 strided rows); rows shorter and longer than a block; odd sizes; 0-d.
struct Case {
  Shape shape;
  int64_t dim;
};
const std::vector<Case> kCases = {
    {{7, 33}, 1},    {{7, 33}, 0},         {{3, 5, 7}, 0},  {{3, 5, 7}, 1}, {{3, 5, 7}, 2},
    {{2, 3000}, -1}, {{4, 3, 40, 50}, 1}, {{1, 1}, 1},     {Shape{}, 0},   {{5}, 0},
};

std::string label(const char* op, const Case& c, DType dtype) {
  return std::string(op) + " " + c.shape.str() + " dim " + std::to_string(c.dim) + " " + dtype_name(dtype);
}

std::vector<int64_t> some_labels(int64_t samples, int64_t classes) {
  std::vector<int64_t> v(static_cast<size_t>(samples));
  for (int64_t i = 0; i < samples; ++i) v[static_cast<size_t>(i)] = (i * 7 + 3) % classes;
  return v;
}

}  // namespace

EMBER_CUDA_TEST_CASE("softmax and log_softmax match cpu along every dim, f32 f16 f64", "[softmax]") {
  for (DType dtype : {kFloat32, kFloat16, kFloat64}) {
    for (const Case& c : kCases) {
      Tensor x = randn(c.shape, TensorOptions(dtype), 0.0, 3.0);
      const int64_t dim = c.dim;
      expect_matches_cpu([dim](auto& in) { return softmax(in[0], dim); }, {x}, tolerance(dtype),
                         label("softmax", c, dtype));
      expect_matches_cpu([dim](auto& in) { return log_softmax(in[0], dim); }, {x}, tolerance(dtype),
                         label("log_softmax", c, dtype));
    }
  }
}

EMBER_CUDA_TEST_CASE("softmax on cuda is stable for huge logits and keeps empty shapes", "[softmax]") {
  Tensor x = from_vector<float>({1000, 0, -1000, 1000, 1000, -1000}, {2, 3}).to(kCUDA);
  expect_values(softmax(x, 1), {1, 0, 0, 0.5, 0.5, 0}, 1e-7, "cuda softmax +-1000");
  Tensor with_inf = from_vector<float>({-INFINITY, 0, -INFINITY}, {3}).to(kCUDA);
  expect_values(softmax(with_inf, 0), {0, 1, 0}, 0, "cuda softmax with -inf");
  Tensor empty_rows = zeros({0, 3}).to(kCUDA);
  CHECK(softmax(empty_rows, 1).shape() == Shape{0, 3});
  CHECK(softmax(empty_rows, 1).device().is_cuda());
}

EMBER_CUDA_TEST_CASE("softmax and log_softmax gradients on cuda equal the cpu gradients", "[softmax]") {
  for (DType dtype : {kFloat32, kFloat16, kFloat64}) {
    for (const Case& c : kCases) {
      Tensor x = randn(c.shape, TensorOptions(dtype));
      Tensor dy = randn(c.shape, TensorOptions(dtype));
      const int64_t dim = c.dim;
      for (bool log : {false, true}) {
        expect_matches_cpu(
            [dim, log](auto& in) {
              Tensor leaf = in[0].detach().requires_grad_();
              Tensor y = log ? log_softmax(leaf, dim) : softmax(leaf, dim);
              y.backward(in[1]);
              return leaf.grad();
            },
            {x, dy}, tolerance(dtype), label(log ? "log_softmax grad" : "softmax grad", c, dtype));
      }
    }
  }
}

EMBER_CUDA_TEST_CASE("cross_entropy loss, log_probs and gradient match cpu", "[softmax]") {
  struct Size {
    int64_t samples, classes;
  };
  for (DType dtype : {kFloat32, kFloat16, kFloat64}) {
    // A typical batch, rows longer than a block, one sample, one class.
    for (Size s : {Size{64, 10}, Size{3, 1000}, Size{1, 7}, Size{5, 1}}) {
      Tensor logits = randn({s.samples, s.classes}, TensorOptions(dtype), 0.0, 2.0);
      Tensor labels = from_vector<int64_t>(some_labels(s.samples, s.classes), {s.samples});
      const std::string name = "cross_entropy [" + std::to_string(s.samples) + ", " + std::to_string(s.classes) +
                               "] " + dtype_name(dtype);
      // The loss is fp32 math whatever the dtype (f32 result): 1e-5 for all.
      expect_matches_cpu([](auto& in) { return cross_entropy(in[0], in[1]); }, {logits, labels}, kTolF32,
                         name + " loss");
      expect_matches_cpu(
          [](auto& in) {
            Tensor log_probs;
            kernels::cross_entropy(in[0], in[1], &log_probs);
            return log_probs;
          },
          {logits, labels}, tolerance(dtype), name + " log_probs");
      expect_matches_cpu(
          [](auto& in) {
            Tensor leaf = in[0].detach().requires_grad_();
            cross_entropy(leaf, in[1]).backward();
            return leaf.grad();
          },
          {logits, labels}, tolerance(dtype), name + " grad");
      // dloss scales the gradient (f32 dloss, as the loss is f32).
      expect_matches_cpu(
          [](auto& in) {
            Tensor log_probs;
            kernels::cross_entropy(in[0], in[1], &log_probs);
            return kernels::cross_entropy_backward(log_probs, in[1], in[2]);
          },
          {logits, labels, scalar_tensor(2.5)}, tolerance(dtype), name + " backward dloss 2.5");
    }
  }
}

EMBER_CUDA_TEST_CASE("cross_entropy on cuda is deterministic and its loss is a 0-d f32 on the device", "[softmax]") {
  Tensor logits = randn({300, 37}, TensorOptions().device(kCUDA));
  Tensor labels = from_vector<int64_t>(some_labels(300, 37), {300}).to(kCUDA);
  Tensor first = cross_entropy(logits, labels);
  CHECK(first.shape() == Shape{});
  CHECK(first.dtype() == DType::f32);
  CHECK(first.device().is_cuda());
  // A fixed-order reduction: the same input gives the same bits, run after run.
  for (int run = 0; run < 3; ++run) CHECK(cross_entropy(logits, labels).item<float>() == first.item<float>());
}

EMBER_CUDA_TEST_CASE("cross_entropy on cuda rejects an out-of-range label by name", "[softmax][errors]") {
  Tensor logits = randn({4, 3}, TensorOptions().device(kCUDA));
  Tensor bad_high = from_vector<int64_t>({0, 2, 5, 1}, {4}).to(kCUDA);
  Tensor bad_negative = from_vector<int64_t>({0, -1, 1, 2}, {4}).to(kCUDA);
  expect_error_contains([&] { cross_entropy(logits, bad_high); },
                        {"cross_entropy", "label 5", "sample 2", "3 classes"});
  expect_error_contains([&] { cross_entropy(logits, bad_negative); }, {"cross_entropy", "label -1", "sample 1"});
  Tensor good = from_vector<int64_t>({0, 2, 1, 1}, {4}).to(kCUDA);
  Tensor log_probs;
  kernels::cross_entropy(logits, good, &log_probs);
  expect_error_contains(
      [&] { kernels::cross_entropy_backward(log_probs, bad_high, scalar_tensor(1.0).to(kCUDA)); },
      {"cross_entropy_backward", "label 5", "3 classes"});
  // The error left no sticky CUDA state: the device still computes.
  expect_matches_cpu([](auto& in) { return cross_entropy(in[0], in[1]); }, {logits.to(kCPU), good.to(kCPU)}, kTolF32,
                     "cross_entropy after an error");
}
