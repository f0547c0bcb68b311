// train::MixedPrecisionOptimizer: fp32 masters own the weights, an inf/NaN skips the step without
// touching anything, finite steps match the fp32 rule on the unscaled gradients.
#include <limits>
#include <memory>
#include <vector>

#include "kernels/ops.h"
#include "memory/memory.h"
#include "optim/sgd.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"
#include "train/mixed_precision_optimizer.h"

using namespace ember;
using test::expect_close;

namespace {

train::OptimizerFactory sgd_factory(double lr, double momentum) {
  return [=](std::vector<Tensor> params) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::SGD>(std::move(params), optim::SgdOptions(lr).momentum(momentum));
  };
}

// Gives the f16 parameter a gradient of grad * scale, as a backward of the scaled loss would.
void set_scaled_grad(const Tensor& param, const std::vector<float>& grad, double scale) {
  param.set_grad(mul(from_vector<float>(grad, param.shape()), scale).to(kFloat16));
}

// 2^10: a gradient of 4 scaled by the default 2^16 would overflow f16 (max 65504), as it
// should; these tests want finite scaled gradients.
optim::GradScalerOptions small_scale() {
  optim::GradScalerOptions o;
  o.init_scale = 1024.0;
  return o;
}

}  // namespace

TEST_CASE("MixedPrecisionOptimizer keeps fp32 masters as their own memory category", "[mixed_precision]") {
  Tensor w = from_vector<float>({0.5f, -1.25f, 2.0f}, Shape{3}).to(kFloat16).requires_grad_();
  const int64_t before = memory_stats(kCPU).by_category[static_cast<size_t>(MemoryCategory::master_weights)].current;
  train::MixedPrecisionOptimizer opt({w}, sgd_factory(0.1, 0.0));
  const int64_t after = memory_stats(kCPU).by_category[static_cast<size_t>(MemoryCategory::master_weights)].current;
  REQUIRE(opt.masters().size() == 1);
  CHECK(opt.masters()[0].dtype() == kFloat32);
  CHECK(after - before >= 3 * 4);
  expect_close(opt.masters()[0], w.to(kFloat32), 0.0, "master copy");
  CHECK(opt.loss_scale() == 65536.0);
}

TEST_CASE("MixedPrecisionOptimizer: finite gradients step the masters and copy them out", "[mixed_precision]") {
  Tensor w = from_vector<float>({0.5f, -1.25f, 2.0f}, Shape{3}).to(kFloat16).requires_grad_();
  train::MixedPrecisionOptimizer opt({w}, sgd_factory(0.5, 0.0), small_scale());
  set_scaled_grad(w, {1.0f, 2.0f, -4.0f}, opt.loss_scale());
  opt.unscale_gradients();
  CHECK_FALSE(w.grad().defined());  // the f16 gradient is freed once taken in
  expect_close(opt.masters()[0].grad(), from_vector<float>({1.f, 2.f, -4.f}, Shape{3}), 0.0, "unscaled");
  REQUIRE(opt.step());
  expect_close(opt.masters()[0], from_vector<float>({0.0f, -2.25f, 4.0f}, Shape{3}), 0.0, "master after SGD");
  CHECK(w.dtype() == kFloat16);
  expect_close(w.to(kFloat32), opt.masters()[0], 0.0, "f16 params = masters");
  CHECK_FALSE(opt.masters()[0].grad().defined());  // cleared for the next step
}

TEST_CASE("MixedPrecisionOptimizer: gradients of several micro-batches add up in fp32", "[mixed_precision]") {
  Tensor w = zeros({2}, TensorOptions(kFloat16)).requires_grad_();
  train::MixedPrecisionOptimizer opt({w}, sgd_factory(1.0, 0.0));
  // 1e-4 is below f16's normal range once multiplied by nothing; scaled and summed in fp32 it survives.
  for (int micro = 0; micro < 4; ++micro) {
    set_scaled_grad(w, {1e-4f, -3e-4f}, opt.loss_scale());
    opt.unscale_gradients();
  }
  // Relative to the result (a tolerance relative to 1 + |result| would pass a zero gradient): the
  // scaled gradient's rounding to f16 (normal there, 2^16 times larger), and 4 f32 roundings (the
  // scaling, two of the three adds, the literals 4e-4f and -12e-4f against 4 times theirs); the
  // unscaling by 2^-16 is exact.
  const Tensor want = from_vector<float>({4e-4f, -12e-4f}, Shape{2});
  test::expect_within(opt.masters()[0].grad(), want, test::ErrorModel{0, 4, 1}.bound(kFloat16, abs(want.to(kFloat64))),
                      "accumulated");
}

TEST_CASE("MixedPrecisionOptimizer: an injected inf skips the step, halves the scale, touches nothing",
          "[mixed_precision]") {
  Tensor w = from_vector<float>({0.5f, -1.25f}, Shape{2}).to(kFloat16).requires_grad_();
  Tensor b = from_vector<float>({3.0f}, Shape{1}).to(kFloat16).requires_grad_();
  train::MixedPrecisionOptimizer opt({w, b}, sgd_factory(0.5, 0.9), small_scale());
  // One finite step first, so the momentum buffers exist and have values to protect.
  set_scaled_grad(w, {1.0f, 1.0f}, opt.loss_scale());
  set_scaled_grad(b, {2.0f}, opt.loss_scale());
  opt.unscale_gradients();
  REQUIRE(opt.step());
  auto& sgd = static_cast<optim::SGD&>(opt.inner());
  const Tensor w_before = w.clone(), b_before = b.clone(), master_before = opt.masters()[0].clone(),
               momentum_before = sgd.momentum_buffer(0).clone();
  const double scale_before = opt.loss_scale();

  // Two micro-batches; only the first has an inf: the whole step is skipped.
  set_scaled_grad(w, {std::numeric_limits<float>::infinity(), 1.0f}, opt.loss_scale());
  set_scaled_grad(b, {1.0f}, opt.loss_scale());
  opt.unscale_gradients();
  set_scaled_grad(w, {1.0f, 1.0f}, opt.loss_scale());
  opt.unscale_gradients();
  CHECK(opt.found_inf());
  CHECK_FALSE(opt.step());
  CHECK(opt.loss_scale() == scale_before / 2);
  expect_close(w, w_before, 0.0, "w untouched");
  expect_close(b, b_before, 0.0, "b untouched");
  expect_close(opt.masters()[0], master_before, 0.0, "master untouched");
  expect_close(sgd.momentum_buffer(0), momentum_before, 0.0, "momentum untouched");
  CHECK_FALSE(opt.found_inf());  // the flag is cleared for the next step
  set_scaled_grad(w, {1.0f, 1.0f}, opt.loss_scale());
  opt.unscale_gradients();
  CHECK(opt.step());
}

// A factory that captures the model and builds over its parameters would step f16 weights (or,
// under ZeRO, the whole model on every rank) that the masters then overwrite: refused.
TEST_CASE("an optimizer factory that ignores the tensors it is given is refused, under fp32 and fp16",
          "[mixed_precision]") {
  Tensor w = from_vector<float>({0.5f, -1.25f}, Shape{2}).requires_grad_();
  const train::OptimizerFactory model_params = [&](std::vector<Tensor>) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::SGD>(std::vector<Tensor>{w}, optim::SgdOptions(0.1));
  };
  // fp32: the model's parameters are what it is given, so the same factory is right there.
  CHECK_NOTHROW(train::make_step_optimizer(train::Precision::fp32, {w}, model_params));
  Tensor h = w.detach().to(kFloat16).requires_grad_();
  const train::OptimizerFactory f16_params = [&](std::vector<Tensor>) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::SGD>(std::vector<Tensor>{h}, optim::SgdOptions(0.1));
  };
  test::expect_error_contains([&] { train::MixedPrecisionOptimizer opt({h}, f16_params); },
                           {"MixedPrecisionOptimizer: the optimizer factory was given 1 tensors", "1 of them not among",
                            "not over the model's parameters"});
  const train::OptimizerFactory none = [](std::vector<Tensor>) -> std::unique_ptr<optim::Optimizer> { return nullptr; };
  test::expect_error_contains([&] { train::make_step_optimizer(train::Precision::fp32, {w}, none); },
                           {"StepOptimizer: the optimizer factory returned null"});
}
