#include <string>
#include <vector>

#include "memory/allocator_scope.h"
#include "memory/memory.h"
#include "optim/sgd.h"
#include "tests/support/error_bound.h"
#include "tests/support/faulty_allocator.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;
using namespace ember::test;

namespace {

// Two SGD steps from p = (1, -2) with the constant gradient g = (0.5, 1) and
// lr 0.1; returns p after each step. The expected values below are PyTorch's
// formulas worked by hand.
std::vector<Tensor> two_steps(const optim::SgdOptions& options, DType dtype) {
  Tensor p = from_vector<double>({1, -2}, {2}, TensorOptions(dtype)).requires_grad_();
  optim::SGD sgd({p}, options);
  std::vector<Tensor> after;
  for (int step = 0; step < 2; ++step) {
    p.set_grad(from_vector<double>({0.5, 1}, {2}, TensorOptions(dtype)));
    sgd.step();
    after.push_back(p.detach().clone());
  }
  return after;
}

void check_two_steps(const optim::SgdOptions& options, const std::vector<double>& first,
                     const std::vector<double>& second, const char* what) {
  for (DType dtype : {kFloat64, kFloat32}) {
    // Two steps' roundings (tests/support/error_bound.h), each of a term below 1 + |p|: the
    // updates lr g' stay below 0.4 for these options. The expected values are exact decimals.
    const double tol = test::ErrorModel{0, 2 * test::kSgdStepRoundings, 0}.tolerance(dtype);
    INFO(what << " " << dtype_name(dtype));
    const auto after = two_steps(options, dtype);
    expect_values(after[0], first, tol, std::string(what) + " step 1");
    expect_values(after[1], second, tol, std::string(what) + " step 2");
  }
}

}  // namespace

TEST_CASE("SGD plain: p -= lr * g", "[sgd]") {
  check_two_steps(optim::SgdOptions(0.1), {0.95, -2.1}, {0.9, -2.2}, "plain");
}

TEST_CASE("SGD momentum: buf = g on the first step, then momentum * buf + g", "[sgd]") {
  // step 2: buf = 0.9 * g + g = 1.9 g
  check_two_steps(optim::SgdOptions(0.1).momentum(0.9), {0.95, -2.1}, {0.855, -2.29}, "momentum");
}

TEST_CASE("SGD dampening scales the new gradient after the first step", "[sgd]") {
  // step 1 is undampened (buf = g); step 2: buf = 0.9 g + (1 - 0.5) g = 1.4 g
  check_two_steps(optim::SgdOptions(0.1).momentum(0.9).dampening(0.5), {0.95, -2.1}, {0.88, -2.24}, "dampening");
}

TEST_CASE("SGD nesterov: the step is g + momentum * buf", "[sgd]") {
  // step 1: g + 0.9 g = 1.9 g; step 2: buf = 1.9 g, step g + 0.9 * 1.9 g = 2.71 g
  check_two_steps(optim::SgdOptions(0.1).momentum(0.9).nesterov(), {0.905, -2.19}, {0.7695, -2.461}, "nesterov");
}

TEST_CASE("SGD weight decay adds wd * p to the gradient", "[sgd]") {
  // step 1: g' = (0.6, 0.8); step 2: g' = (0.5 + 0.094, 1 - 0.208) = (0.594, 0.792)
  check_two_steps(optim::SgdOptions(0.1).weight_decay(0.1), {0.94, -2.08}, {0.8806, -2.1592}, "weight decay");
  // with momentum: buf2 = 0.9 * (0.6, 0.8) + (0.594, 0.792) = (1.134, 1.512)
  check_two_steps(optim::SgdOptions(0.1).weight_decay(0.1).momentum(0.9), {0.94, -2.08}, {0.8266, -2.2312},
                  "weight decay + momentum");
}

TEST_CASE("SGD skips parameters without a gradient, set_lr changes the next step", "[sgd]") {
  Tensor a = from_vector<float>({1, 2}, {2}).requires_grad_();
  Tensor b = from_vector<float>({3, 4}, {2}).requires_grad_();
  optim::SGD sgd({a, b}, optim::SgdOptions(0.5));
  a.set_grad(from_vector<float>({1, 1}, {2}));
  sgd.step();
  expect_values(a, {0.5, 1.5}, 0, "sgd a");
  expect_values(b, {3, 4}, 0, "sgd b untouched");
  sgd.set_lr(0.25);
  CHECK(sgd.lr() == 0.25);
  sgd.step();
  expect_values(a, {0.25, 1.25}, 0, "sgd a after set_lr");
}

TEST_CASE("SGD with gradients from backward, zero_grad clears them", "[sgd]") {
  Tensor p = from_vector<float>({1, -2, 3}, {3}).requires_grad_();
  optim::SGD sgd({p}, optim::SgdOptions(0.1));
  sum(p * p).backward();  // grad = 2p, exact
  sgd.step();
  // lr's rounding to f32, the product and the difference
  const double tol = test::ErrorModel{0, 3, 0}.tolerance(kFloat32);
  expect_values(p, {0.8, -1.6, 2.4}, tol, "sgd from backward");
  sgd.zero_grad(false);
  REQUIRE(p.grad().defined());
  expect_values(p.grad(), {0, 0, 0}, 0, "zero_grad(false)");
  sgd.zero_grad();
  CHECK_FALSE(p.grad().defined());
  sgd.step();  // no gradient: nothing happens
  expect_values(p, {0.8, -1.6, 2.4}, tol, "sgd without grad");
}

TEST_CASE("SGD momentum buffers are allocated lazily as optimizer state", "[sgd][memory]") {
  const auto state_bytes = [] {
    return memory_stats(kCPU).by_category[static_cast<size_t>(MemoryCategory::optimizer_state)].current;
  };
  Tensor p = zeros({256}).requires_grad_();
  optim::SGD with_momentum({p}, optim::SgdOptions(0.1).momentum(0.9));
  CHECK_FALSE(with_momentum.momentum_buffer(0).defined());
  CHECK(with_momentum.state_bytes() == 0);
  const int64_t before = state_bytes();
  p.set_grad(ones({256}));
  with_momentum.step();
  REQUIRE(with_momentum.momentum_buffer(0).defined());
  expect_values(with_momentum.momentum_buffer(0), std::vector<double>(256, 1.0), 0, "first buffer = grad");
  CHECK(with_momentum.state_bytes() == 256 * 4);
  CHECK(state_bytes() - before >= 256 * 4);

  optim::SGD plain({p}, optim::SgdOptions(0.1));
  plain.step();
  CHECK_FALSE(plain.momentum_buffer(0).defined());
}

TEST_CASE("SGD: an out-of-memory while it makes its momentum buffers leaves everything as it was", "[sgd][fault]") {
  test::FaultyAllocator faulty;  // before the optimizer: its buffers come from here
  Tensor a = from_vector<float>({1, -2}, {2}).requires_grad_(), b = from_vector<float>({3}, {1}).requires_grad_();
  optim::SGD sgd({a, b}, optim::SgdOptions(0.1).momentum(0.9));
  a.set_grad(from_vector<float>({0.5, 1}, {2}));
  b.set_grad(from_vector<float>({2}, {1}));
  {
    AllocatorScope scope(kCPU, *faulty.allocator);
    faulty.faults->fail_once(2);  // b's buffer, after a's was made
    CHECK_THROWS_AS(sgd.step(), OutOfMemoryError);
  }
  expect_values(a, {1, -2}, 0, "a untouched");  // it used to be updated already
  CHECK_FALSE(sgd.momentum_buffer(0).defined());
  CHECK(sgd.state_bytes() == 0);
  {
    AllocatorScope scope(kCPU, *faulty.allocator);
    sgd.step();
  }
  const double tol = test::ErrorModel{0, test::kSgdStepRoundings, 0}.tolerance(kFloat32);  // one step
  expect_values(a, {0.95, -2.1}, tol, "a after one step");
  expect_values(b, {2.8}, tol, "b after one step");
}

TEST_CASE("SGD rejects bad options and non-leaf parameters", "[sgd][errors]") {
  Tensor p = zeros({2}).requires_grad_();
  expect_error_contains([&] { optim::SGD({p}, optim::SgdOptions(0.1).nesterov()); }, {"SGD", "nesterov", "momentum"});
  expect_error_contains([&] { optim::SGD({p}, optim::SgdOptions(0.1).momentum(-1)); }, {"SGD", "momentum", "-1"});
  expect_error_contains([&] { optim::SGD({p}, optim::SgdOptions(-0.1)); }, {"learning rate", "-0.1"});
  expect_error_contains([&] { optim::SGD({p * 2.0}, optim::SgdOptions(0.1)); }, {"optimizer", "not a leaf"});
}

EMBER_CUDA_TEST_CASE("SGD on cuda matches the CPU over two momentum steps", "[sgd]") {
  Tensor p0 = randn({1000});
  Tensor g = randn({1000});
  auto run = [&](Device device) {
    // clone: p0.to(kCPU) is p0 itself (as in PyTorch), and the steps would move the other run's start.
    Tensor p = p0.to(device).clone().requires_grad_();
    optim::SGD sgd({p}, optim::SgdOptions(0.1).momentum(0.9).nesterov().weight_decay(0.01));
    for (int i = 0; i < 2; ++i) {
      p.set_grad(g.to(device));
      sgd.step();
    }
    return p.to(kCPU);
  };
  // The same fp32 formula on both sides; fused multiply-adds may round differently: two steps'
  // roundings on each side, each of a term below |p| + |g| + 1 (the two updates add up to at most
  // lr (1.9 + 2.71) (|g| + wd |p|) < |g| + |p| / 100).
  const Tensor magnitude = abs(p0.to(kFloat64)) + abs(g.to(kFloat64)) + 1.0;
  const test::ErrorModel both_sides{0, 2 * 2 * test::kSgdStepRoundings, 0};
  test::expect_within(run(kCUDA), run(kCPU), both_sides.bound(kFloat32, magnitude), "sgd cuda");
}
