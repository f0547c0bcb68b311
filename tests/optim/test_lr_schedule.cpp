// Learning-rate schedules (optim/lr_schedule.h) at their key steps, worked by hand.
// Tolerance: 1e-12 relative, the rounding of a few double operations (cos, pow).
#include <cmath>

#include "kernels/factories.h"
#include "optim/adam.h"
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

TEST_CASE("OneCycle cycles the momentum as OneCycleLR(cycle_momentum=True)", "[lr_schedule]") {
  // PyTorch's OneCycleLR(max_lr=1, total_steps=10) (pct_start 0.3, base_momentum 0.85,
  // max_momentum 0.95, anneal_strategy "cos"): phase 1 ends at step 0.3 * 10 - 1 = 2 and the
  // momentum falls from max_momentum to base_momentum along _annealing_cos(start, end, pct) =
  // end + (start - end) / 2 (cos(pi pct) + 1); phase 2 (steps 2..9) climbs back. Its values, from
  // those formulas in Python (as OneCycleLR.get_lr computes them): lr and momentum per step.
  const double lr[] = {0.04, 0.52, 1.0, 0.9504846320134737, 0.8117456539497631, 0.6112620219362893,
                       0.38874197806371075, 0.18825834605023697, 0.049519367986526286, 4e-06};
  const double momentum[] = {0.95, 0.9, 0.85, 0.854951556604879, 0.8688255099070633, 0.8888739533021842,
                             0.9111260466978157, 0.9311744900929366, 0.945048443395121, 0.95};
  const optim::OneCycle one(1.0, 10);
  for (int64_t step = 0; step < 10; ++step) {
    INFO("step " << step);
    CHECK(one.lr_at(step) == Approx(lr[step]).epsilon(kTol));
    REQUIRE(one.momentum_at(step).has_value());
    CHECK(*one.momentum_at(step) == Approx(momentum[step]).epsilon(kTol));
  }
  CHECK(*one.momentum_at(50) == Approx(0.95).epsilon(kTol));  // held after the end, as the rate is
  // Other bounds: from 0.99 down to 0.8 and back.
  const optim::OneCycle custom(1.0, 10, 0.3, 25.0, 1e4, true, 0.8, 0.99);
  CHECK(*custom.momentum_at(0) == Approx(0.99).epsilon(kTol));
  CHECK(*custom.momentum_at(1) == Approx((0.8 + 0.99) / 2).epsilon(kTol));
  CHECK(*custom.momentum_at(2) == Approx(0.8).epsilon(kTol));
  // cycle_momentum=False leaves it alone; so does every other schedule.
  CHECK_FALSE(optim::OneCycle(1.0, 10, 0.3, 25.0, 1e4, false).momentum_at(0).has_value());
  CHECK_FALSE(optim::StepLR(1.0, 2).momentum_at(0).has_value());
  CHECK_FALSE(optim::CosineWithWarmup(1.0, 2, 10).momentum_at(0).has_value());
}

TEST_CASE("OneCycle's momentum drives SGD's momentum and Adam's beta1", "[lr_schedule]") {
  // SGD from p = 0 with every gradient 1: the first step copies the gradient into the buffer,
  // then buf = momentum_t buf + g (dampening 0) and p -= lr_t buf, with OneCycle's lr_t and
  // momentum_t of each step, as PyTorch's SGD reads group["momentum"] at every step.
  const optim::OneCycle one(1.0, 10);
  Tensor p = zeros({1}).requires_grad_();
  optim::SGD sgd({p}, optim::SgdOptions(0.1).momentum(0.5));  // OneCycle replaces 0.5, as in PyTorch
  double want = 0.0, buf = 0.0;
  for (int64_t step = 0; step < 4; ++step) {
    one.apply(sgd, step);
    CHECK(sgd.param_groups()[0].momentum == *one.momentum_at(step));
    p.set_grad(full({1}, 1.0));
    sgd.step();
    buf = step == 0 ? 1.0 : *one.momentum_at(step) * buf + 1.0;
    want -= one.lr_at(step) * buf;
    INFO("step " << step);
    CHECK(p.item<float>() == Approx(want).epsilon(1e-6));  // f32 parameter: a few roundings of values below 3
  }
  // Adam's first moment with beta1_t: m = beta1_t m + (1 - beta1_t) g; with g = 1 from 0.
  Tensor q = zeros({1}).requires_grad_();
  optim::Adam adam({q}, optim::AdamOptions(0.1));
  double m = 0.0;
  for (int64_t step = 0; step < 3; ++step) {
    one.apply(adam, step);
    CHECK(adam.param_groups()[0].momentum == *one.momentum_at(step));
    q.set_grad(full({1}, 1.0));
    adam.step();
    m = *one.momentum_at(step) * m + (1.0 - *one.momentum_at(step));
    INFO("step " << step);
    CHECK(adam.exp_avg(0).item<float>() == Approx(m).epsilon(1e-6));
  }
  // A rule without a momentum term cannot be cycled.
  struct Plain : optim::Optimizer {
    explicit Plain(std::vector<Tensor> ps) : Optimizer(optim::one_group(std::move(ps)), 0.1, 0.0) {}
    void step_impl() override {}
    const char* rule_name() const override { return "Plain"; }
  };
  Plain plain({zeros({1}).requires_grad_()});
  CHECK_FALSE(plain.has_momentum());
  expect_error_contains([&] { one.apply(plain, 0); }, {"OneCycle", "cycle_momentum", "momentum term"});
  expect_error_contains([&] { plain.set_group_momentum(0, 0.9); }, {"Plain", "no momentum term"});
  optim::OneCycle(1.0, 10, 0.3, 25.0, 1e4, false).apply(plain, 0);  // the rate alone is fine
  // Each rule checks the value it is given.
  expect_error_contains([&] { adam.set_group_momentum(0, 1.0); }, {"Adam", "beta1", "[0, 1)", "1"});
  expect_error_contains([&] { sgd.set_group_momentum(0, -0.5); }, {"SGD", "momentum", ">= 0", "-0.5"});
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
  // The CLI's onecycle keeps the recipe's momentum (cycle_momentum off).
  CHECK_FALSE(onecycle->momentum_at(0).has_value());
  optim::SGD with_momentum({p}, optim::SgdOptions(1.0).momentum(0.9));
  onecycle->apply(with_momentum, 10);
  CHECK(with_momentum.param_groups()[0].momentum == 0.9);
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
  expect_error_contains([] { optim::OneCycle(0.1, 100, 0.3, 25.0, 1e4, true, 0.95, 0.85); },
                        {"OneCycle", "base_momentum", "max_momentum", "0.95", "0.85"});
}
