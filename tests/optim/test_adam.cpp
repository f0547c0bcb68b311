// Adam and AdamW (optim/adam.h) against PyTorch's formulas evaluated by hand in f64.
// Tolerances: f64 results against values printed to 14 digits: 1e-12; f32 ones: the roundings of
// each step (tests/support/error_bound.h), each of a term below 1 + |p| (check_steps).
#include <cmath>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "memory/allocator_scope.h"
#include "memory/memory.h"
#include "optim/adam.h"
#include "tests/support/error_bound.h"
#include "tests/support/faulty_allocator.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

namespace {

// The gradients of steps 1, 2, 3 for p0 = (1, -2); they change sign and size so that
// both moments and both bias corrections matter.
const std::vector<std::vector<double>> kGrads = {{0.5, 1.0}, {-0.25, 2.0}, {1.0, 0.5}};

template <class Opt>
std::vector<Tensor> three_steps(const optim::AdamOptions& options, DType dtype) {
  Tensor p = from_vector<double>({1, -2}, {2}, TensorOptions(dtype)).requires_grad_();
  Opt opt({p}, options);
  std::vector<Tensor> after;
  for (const auto& g : kGrads) {
    p.set_grad(from_vector<double>(g, {2}, TensorOptions(dtype)));
    opt.step();
    after.push_back(p.detach().clone());
  }
  return after;
}

// In f32, each step's roundings (kAdamStepRoundings) are of terms below 1 + |p|: the update
// lr m^ / (sqrt(v^) + eps), and the same with m's terms in absolute value, stays below 0.2 per
// step for these gradients and betas.
template <class Opt>
void check_steps(const optim::AdamOptions& options, const std::vector<double>& first,
                 const std::vector<double>& third, const char* what) {
  for (DType dtype : {kFloat64, kFloat32}) {
    INFO(what << " " << dtype_name(dtype));
    const auto after = three_steps<Opt>(options, dtype);
    const auto tol = [dtype](int64_t steps) {
      return dtype == kFloat64 ? 1e-12 : test::ErrorModel{0, steps * test::kAdamStepRoundings, 0}.tolerance(dtype);
    };
    expect_values(after[0], first, tol(1), std::string(what) + " step 1");
    expect_values(after[2], third, tol(3), std::string(what) + " step 3");
  }
}

// Step 1 of Adam from zero moments: m/bc1 = g and sqrt(v/bc2) = |g|, so p -= lr * g / (|g| + eps).
double first_step(double p, double g, double lr, double eps) { return p - lr * g / (std::fabs(g) + eps); }

}  // namespace

// Step 3 values: the same formulas iterated in f64 outside this code (Python, 3 steps of
// m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2, p -= lr/(1-b1^t) m / (sqrt(v)/sqrt(1-b2^t) + eps)).
TEST_CASE("Adam: one and three steps match PyTorch's formulas", "[adam]") {
  const double lr = 0.1, eps = 1e-8;
  check_steps<optim::Adam>(optim::AdamOptions(lr),
                           {first_step(1, 0.5, lr, eps), first_step(-2, 1, lr, eps)},  // (0.900000002, -2.099999999)
                           {0.80755513967709, -2.28327492727272}, "adam");
  // Other betas and a large eps: eps is added to sqrt(v)/sqrt(bc2), not inside the root.
  check_steps<optim::Adam>(optim::AdamOptions(lr).betas(0.5, 0.9).eps(1e-3),
                           {first_step(1, 0.5, lr, 1e-3), first_step(-2, 1, lr, 1e-3)},
                           {0.816477505731979, -2.27981981429352}, "adam betas");
}

TEST_CASE("Adam weight decay is L2: wd * p joins the gradient before the moments", "[adam]") {
  // step 1: g' = g + 0.1 p = (0.6, 0.8), then p -= lr * g' / (|g'| + eps)
  const double lr = 0.1, eps = 1e-8;
  check_steps<optim::Adam>(optim::AdamOptions(lr).weight_decay(0.1),
                           {first_step(1, 0.6, lr, eps), first_step(-2, 0.8, lr, eps)},
                           {0.781504399863166, -2.27722596064205}, "adam weight decay");
}

TEST_CASE("AdamW decouples weight decay: p *= 1 - lr * wd before the Adam step", "[adam]") {
  // step 1: p = (1, -2) * 0.99 = (0.99, -1.98), then the plain Adam step with g
  const double lr = 0.1, eps = 1e-8;
  check_steps<optim::AdamW>(optim::AdamOptions(lr).weight_decay(0.1),
                            {first_step(0.99, 0.5, lr, eps), first_step(-1.98, 1, lr, eps)},
                            {0.780110476670211, -2.2209177452729}, "adamw");
  // Without weight decay AdamW is Adam (AdamW's default is 0.01: set 0).
  const auto adam = three_steps<optim::Adam>(optim::AdamOptions(lr), kFloat64);
  const auto adamw = three_steps<optim::AdamW>(optim::AdamOptions(lr).weight_decay(0.0), kFloat64);
  for (size_t step = 0; step < adam.size(); ++step)
    CHECK(adam[step].to_vector<double>() == adamw[step].to_vector<double>());
}

TEST_CASE("Adam minimises a quadratic through backward", "[adam]") {
  const Tensor target = from_vector<float>({3, -1, 0.5, 2}, {4});
  Tensor p = zeros({4}).requires_grad_();
  optim::Adam adam({p}, optim::AdamOptions(0.05));
  double first_loss = 0, loss_value = 0;
  for (int step = 0; step < 500; ++step) {
    adam.zero_grad();
    const Tensor diff = p - target;
    const Tensor loss = sum(diff * diff);
    loss_value = loss.item<float>();
    if (step == 0) first_loss = loss_value;
    loss.backward();
    adam.step();
  }
  CHECK(first_loss == 9 + 1 + 0.25 + 4);  // squares of f32-exact values and their sum: exact
  // Adam's step is ~lr near the minimum until v decays, so it converges to a small
  // neighbourhood: 1e-4 of the initial loss is far below where it started and fails if it diverges.
  CHECK(loss_value < 1e-4 * first_loss);
  expect_values(p, {3, -1, 0.5, 2}, 2e-2, "adam quadratic minimum");
}

TEST_CASE("Adam state: lazy fp32 moments as optimizer_state, per-parameter step counts", "[adam][memory]") {
  const auto state_category_bytes = [] {
    return memory_stats(kCPU).by_category[static_cast<size_t>(MemoryCategory::optimizer_state)].current;
  };
  Tensor a = zeros({256}).requires_grad_();
  Tensor b = from_vector<float>({3, 4}, {2}).requires_grad_();
  optim::Adam adam({a, b}, optim::AdamOptions(0.1));
  CHECK(adam.state_bytes() == 0);
  CHECK_FALSE(adam.exp_avg(0).defined());
  const int64_t before = state_category_bytes();
  a.set_grad(ones({256}));
  adam.step();
  REQUIRE(adam.exp_avg(0).defined());
  REQUIRE(adam.exp_avg_sq(0).defined());
  CHECK(adam.exp_avg(0).dtype() == kFloat32);
  CHECK(adam.exp_avg_sq(0).dtype() == kFloat32);
  // (1 - b1) and (1 - b2) computed in double and rounded to f32, then times g = 1 and plus b * 0
  // (exact): one rounding of each result, relative to it (2 units leave room for the double's)
  const double u = test::unit_roundoff(kFloat32);
  test::expect_within(adam.exp_avg(0), std::vector<double>(256, 0.1), std::vector<double>(256, 2 * u * 0.1),
                      "exp_avg = (1 - b1) g");
  test::expect_within(adam.exp_avg_sq(0), std::vector<double>(256, 1e-3), std::vector<double>(256, 2 * u * 1e-3),
                      "exp_avg_sq = (1 - b2) g^2");
  CHECK(adam.state_bytes() == 2 * 256 * 4);
  CHECK(state_category_bytes() - before >= 2 * 256 * 4);
  // b had no gradient: untouched, no state, no step counted.
  expect_values(b, {3, 4}, 0, "adam b untouched");
  CHECK_FALSE(adam.exp_avg(1).defined());
  CHECK(adam.step_count(0) == 1);
  CHECK(adam.step_count(1) == 0);
  // b's first step uses step 1's bias corrections even though a is at step 2.
  b.set_grad(from_vector<float>({1, -1}, {2}));
  adam.set_lr(0.5);
  adam.step();
  CHECK(adam.step_count(0) == 2);
  CHECK(adam.step_count(1) == 1);
  expect_values(b, {first_step(3, 1, 0.5, 1e-8), first_step(4, -1, 0.5, 1e-8)},
                test::ErrorModel{0, test::kAdamStepRoundings, 0}.tolerance(kFloat32), "adam b first step, lr 0.5");
}

TEST_CASE("Adam: an out-of-memory while it makes its moments leaves everything as it was", "[adam][fault]") {
  const auto after_one_step = [](bool fault) {
    test::FaultyAllocator faulty;  // before the optimizer: its moments come from here
    Tensor a = from_vector<float>({1, -2}, {2}).requires_grad_(), b = from_vector<float>({3}, {1}).requires_grad_();
    optim::Adam adam({a, b}, optim::AdamOptions(0.1));
    a.set_grad(from_vector<float>({0.5, 1}, {2}));
    b.set_grad(from_vector<float>({2}, {1}));
    if (fault) {
      AllocatorScope scope(kCPU, *faulty.allocator);
      faulty.faults->fail_once(2);  // a's second moment: the first used to stay, alone
      CHECK_THROWS_AS(adam.step(), OutOfMemoryError);
      expect_values(a, {1, -2}, 0, "a untouched");
      CHECK(adam.state_bytes() == 0);
    }
    AllocatorScope scope(kCPU, *faulty.allocator);
    adam.step();
    return std::vector<std::vector<double>>{a.to_vector<double>(), b.to_vector<double>()};
  };
  CHECK(after_one_step(/*fault=*/true) == after_one_step(/*fault=*/false));
}

TEST_CASE("Adam rejects bad options, adam_step_ names the op and the shapes", "[adam][errors]") {
  Tensor p = zeros({2}).requires_grad_();
  expect_error_contains([&] { optim::Adam({p}, optim::AdamOptions(0.1).betas(1.0, 0.999)); }, {"Adam", "beta1", "1"});
  expect_error_contains([&] { optim::AdamW({p}, optim::AdamOptions(0.1).betas(0.9, -0.5)); }, {"AdamW", "beta2"});
  expect_error_contains([&] { optim::Adam({p}, optim::AdamOptions(0.1).eps(-1)); }, {"Adam", "eps", "-1"});
  expect_error_contains([&] { optim::AdamW({p}, optim::AdamOptions(0.1).weight_decay(-0.1)); },
                        {"AdamW", "weight_decay", "-0.1"});
  expect_error_contains([&] { optim::Adam({p}, optim::AdamOptions(-1)); }, {"learning rate", "-1"});

  const Tensor x = zeros({2});
  kernels::AdamOptions k;
  expect_error_contains([&] { kernels::adam_step_(x, zeros({3}), zeros({2}), zeros({2}), k, 1); },
                        {"adam_step", "[2]", "[3]"});
  const Tensor f64 = zeros({2}, TensorOptions(kFloat64));
  expect_error_contains([&] { kernels::adam_step_(x, zeros({2}), f64, zeros({2}), k, 1); }, {"adam_step", "f32", "f64"});
  expect_error_contains([&] { kernels::adam_step_(x, zeros({2}), zeros({2}), Tensor(), k, 1); },
                        {"adam_step", "exp_avg_sq", "undefined"});
  expect_error_contains([&] { kernels::adam_step_(x, zeros({2}), zeros({2}), zeros({2}), k, 0); },
                        {"adam_step", "step", "0"});
  k.decoupled = true;
  expect_error_contains([&] { kernels::adam_step_(zeros({2}, TensorOptions(kInt64)), zeros({2}, TensorOptions(kInt64)),
                                                  zeros({2}, TensorOptions(kInt64)), zeros({2}, TensorOptions(kInt64)),
                                                  k, 1); },
                        {"adamw_step", "floating"});
  // A rejected gradient leaves the step count alone.
  optim::Adam adam({p}, optim::AdamOptions(0.1));
  p.set_grad(zeros({2}));
  adam.step();
  p.set_grad(zeros({3}));
  expect_error_contains([&] { adam.step(); }, {"adam_step", "[2]", "[3]"});
  CHECK(adam.step_count(0) == 1);
}
