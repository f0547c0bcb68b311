// Learning-rate schedules (optim/lr_schedule.h) at their key steps, worked by hand.
// Tolerance: 1e-12 relative, the rounding of a few double operations (cos, pow).
#include <cmath>

#include "optim/lr_schedule.h"
#include "optim/sgd.h"
#include "tests/support/expect.h"

using namespace ember;
using test::expect_error_contains;

namespace {

constexpr double kTol = 1e-12;
constexpr double kPi = 3.14159265358979323846;

}  // namespace

TEST_CASE("ConstantLR and StepLR", "[lr_schedule]") {
  const optim::ConstantLR constant(0.3);
  CHECK(constant.lr_at(0) == 0.3);
  CHECK(constant.lr_at(1000000) == 0.3);

  const optim::StepLR step(1.0, 10, 0.5);
  CHECK(step.lr_at(0) == 1.0);
  CHECK(step.lr_at(9) == 1.0);
  CHECK(step.lr_at(10) == 0.5);
  CHECK(step.lr_at(19) == 0.5);
  CHECK(step.lr_at(25) == 0.25);
}

TEST_CASE("CosineWithWarmup: linear warm-up, cosine down to min_lr", "[lr_schedule]") {
  const optim::CosineWithWarmup cosine(1.0, 10, 110, 0.1);
  // Warm-up from 0: step / 10 of base.
  CHECK(cosine.lr_at(0) == 0.0);
  for (int64_t s = 1; s < 10; ++s) CHECK(cosine.lr_at(s) == Approx(s / 10.0).epsilon(kTol));
  CHECK(cosine.lr_at(10) == Approx(1.0).epsilon(kTol));
  // Half-way through the 100 decay steps cos(pi/2) = 0: the mean of base and min.
  CHECK(cosine.lr_at(60) == Approx(0.55).epsilon(kTol));
  // A quarter: min + (base - min) * (1 + cos(pi/4)) / 2.
  CHECK(cosine.lr_at(35) == Approx(0.1 + 0.9 * (1 + std::cos(kPi / 4)) / 2).epsilon(kTol));
  CHECK(cosine.lr_at(110) == Approx(0.1).epsilon(kTol));
  CHECK(cosine.lr_at(500) == Approx(0.1).epsilon(kTol));  // held after the end
  for (int64_t s = 11; s <= 110; ++s) CHECK(cosine.lr_at(s) < cosine.lr_at(s - 1));

  // warmup_start_factor: 0.1 -> 1 linearly over 4 steps.
  const optim::CosineWithWarmup factor(2.0, 4, 8, 0.0, 0.1);
  CHECK(factor.lr_at(0) == Approx(0.2).epsilon(kTol));
  CHECK(factor.lr_at(2) == Approx(2.0 * (0.1 + 0.9 * 0.5)).epsilon(kTol));
  CHECK(factor.lr_at(4) == Approx(2.0).epsilon(kTol));
  CHECK(factor.lr_at(8) == Approx(0.0).margin(kTol));

  // No warm-up: starts at base.
  CHECK(optim::CosineWithWarmup(0.5, 0, 10).lr_at(0) == Approx(0.5).epsilon(kTol));
}

TEST_CASE("OneCycle follows PyTorch's OneCycleLR", "[lr_schedule]") {
  // max 1, 100 steps, pct 0.3, div 25, final_div 1e4: starts at 0.04, peaks at step 29
  // (pct * total - 1), ends at step 99 at 0.04 / 1e4 = 4e-6.
  const optim::OneCycle one(1.0, 100);
  CHECK(one.lr_at(0) == Approx(0.04).epsilon(kTol));
  CHECK(one.lr_at(29) == Approx(1.0).epsilon(kTol));
  CHECK(one.lr_at(99) == Approx(4e-6).epsilon(kTol));
  CHECK(one.lr_at(200) == Approx(4e-6).epsilon(kTol));
  // Mid warm-up (step 14.5 would be the middle): step 14 is 14/29 of the cosine.
  const auto anneal = [](double start, double end, double pct) {
    return end + (start - end) / 2 * (std::cos(kPi * pct) + 1);
  };
  CHECK(one.lr_at(14) == Approx(anneal(0.04, 1.0, 14.0 / 29.0)).epsilon(kTol));
  // Annealing phase: 70 steps from 29 to 99; step 64 is half-way.
  CHECK(one.lr_at(64) == Approx((1.0 + 4e-6) / 2).epsilon(kTol));
  for (int64_t s = 1; s <= 29; ++s) CHECK(one.lr_at(s) > one.lr_at(s - 1));
  for (int64_t s = 30; s <= 99; ++s) CHECK(one.lr_at(s) < one.lr_at(s - 1));

  // Custom factors: 10 steps, pct 0.5 -> peak at step 4; start 2 / 4, end 2 / (4 * 100).
  const optim::OneCycle custom(2.0, 10, 0.5, 4.0, 100.0);
  CHECK(custom.lr_at(0) == Approx(0.5).epsilon(kTol));
  CHECK(custom.lr_at(4) == Approx(2.0).epsilon(kTol));
  CHECK(custom.lr_at(9) == Approx(0.005).epsilon(kTol));
}

TEST_CASE("apply sets the optimizer's learning rate, make_schedule by name", "[lr_schedule]") {
  Tensor p = zeros({1}).requires_grad_();
  optim::SGD sgd({p}, optim::SgdOptions(1.0));
  const optim::StepLR step(1.0, 2, 0.5);
  step.apply(sgd, 5);
  CHECK(sgd.lr() == 0.25);

  CHECK(optim::make_schedule("constant", 0.1, 100)->lr_at(99) == 0.1);
  const auto by_step = optim::make_schedule("step", 1.0, 90);  // x0.1 every 30 steps
  CHECK(by_step->lr_at(29) == 1.0);
  CHECK(by_step->lr_at(30) == Approx(0.1).epsilon(kTol));
  CHECK(by_step->lr_at(60) == Approx(0.01).epsilon(kTol));
  const auto cosine = optim::make_schedule("cosine", 1.0, 200);  // 10 warm-up steps
  CHECK(cosine->lr_at(5) == Approx(0.5).epsilon(kTol));
  CHECK(cosine->lr_at(10) == Approx(1.0).epsilon(kTol));
  CHECK(cosine->lr_at(200) == Approx(0.0).margin(kTol));
  const auto onecycle = optim::make_schedule("onecycle", 1.0, 100);
  CHECK(onecycle->lr_at(0) == Approx(0.04).epsilon(kTol));
  CHECK(onecycle->lr_at(29) == Approx(1.0).epsilon(kTol));
}

TEST_CASE("schedules reject bad arguments", "[lr_schedule][errors]") {
  expect_error_contains([] { optim::make_schedule("linear", 0.1, 10); },
                        {"make_schedule", "linear", "constant", "onecycle"});
  expect_error_contains([] { optim::make_schedule("cosine", 0.1, 0); }, {"make_schedule", "total_steps", "0"});
  expect_error_contains([] { optim::StepLR(0.1, 0); }, {"StepLR", "step_size", "0"});
  expect_error_contains([] { optim::ConstantLR(-1); }, {"ConstantLR", "lr", "-1"});
  expect_error_contains([] { optim::CosineWithWarmup(0.1, 20, 10); }, {"CosineWithWarmup", "warmup_steps", "20"});
  expect_error_contains([] { optim::CosineWithWarmup(0.1, 0, 10, 0.5); }, {"CosineWithWarmup", "min_lr", "0.5"});
  expect_error_contains([] { optim::OneCycle(0.1, 3); }, {"OneCycle", "total_steps", "3", "too small"});
  expect_error_contains([] { optim::OneCycle(0.1, 100, 1.5); }, {"OneCycle", "pct_start", "1.5"});
  expect_error_contains([] { optim::ConstantLR(0.1).lr_at(-1); }, {"ConstantLR", "step", "-1"});
}
