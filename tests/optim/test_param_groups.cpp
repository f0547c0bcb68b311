// Parameter groups (optim/param_group.h, Optimizer::param_groups): each group's lr and
// weight decay in SGD, Adam and AdamW against updates worked by hand, the state_dict of
// several groups, schedules over groups, and decay_groups' split of a model.
#include <vector>

#include "kernels/factories.h"
#include "optim/adam.h"
#include "optim/lr_schedule.h"
#include "optim/param_group.h"
#include "optim/sgd.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

namespace {

// One f32 step's roundings (tests/support/error_bound.h), each of a term below 1 + |p|: every
// gradient is 1 and every update at most lr (1 + wd p) <= 0.2.
const double kSgdTol = test::ErrorModel{0, test::kSgdStepRoundings, 0}.tolerance(kFloat32);
const double kAdamTol = test::ErrorModel{0, test::kAdamStepRoundings, 0}.tolerance(kFloat32);

// Group 0: a = (1, 2) with lr 0.1 and weight decay 0.5 of its own; group 1: b = (3) with
// lr 0.01 of its own and the options' weight decay. Every gradient is 1.
struct TwoGroups {
  Tensor a = from_vector<float>({1, 2}, {2}).requires_grad_();
  Tensor b = from_vector<float>({3}, {1}).requires_grad_();
  std::vector<optim::ParamGroup> groups() const { return {{{a}, 0.1, 0.5}, {{b}, 0.01, std::nullopt}}; }
  void set_grads() const {
    a.set_grad(full({2}, 1.0));
    b.set_grad(full({1}, 1.0));
  }
};

}  // namespace

TEST_CASE("SGD: each group steps with its own lr and weight decay", "[optim][param_groups]") {
  TwoGroups t;
  optim::SGD sgd(t.groups(), optim::SgdOptions(1.0).weight_decay(0.2));
  REQUIRE(sgd.param_groups().size() == 2);
  CHECK(sgd.param_groups()[1].weight_decay == 0.2);
  CHECK(sgd.param_groups()[1].first == 1);
  CHECK(sgd.parameters().size() == 2);
  t.set_grads();
  sgd.step();
  // p -= lr * (g + wd * p)
  expect_values(t.a, {1 - 0.1 * 1.5, 2 - 0.1 * 2.0}, kSgdTol, "sgd group 0");
  expect_values(t.b, {3 - 0.01 * (1 + 0.2 * 3)}, kSgdTol, "sgd group 1");
}

TEST_CASE("Adam and AdamW: each group's lr and weight decay, AdamW's default 0.01", "[optim][param_groups][adam]") {
  // A first Adam step moves p by lr * g / (|g| + eps) = lr (bias-corrected moments are g and g^2).
  const double eps = 1e-8, step = 1.0 / (1.0 + eps);
  {
    TwoGroups t;
    optim::Adam adam(t.groups(), optim::AdamOptions(1.0));  // weight decay 0 by default
    CHECK(adam.param_groups()[1].weight_decay == 0.0);
    t.set_grads();
    adam.step();
    // group 0, L2: g + wd * p = (1.5, 2) > 0, so each moves by lr
    expect_values(t.a, {1 - 0.1 * step, 2 - 0.1 * step}, kAdamTol, "adam group 0");
    expect_values(t.b, {3 - 0.01 * step}, kAdamTol, "adam group 1");
  }
  {
    TwoGroups t;
    optim::AdamW adamw(t.groups(), optim::AdamOptions(1.0));  // weight decay 0.01 by default
    CHECK(adamw.options().values.weight_decay == optim::kAdamWDefaultWeightDecay);
    CHECK(adamw.param_groups()[1].weight_decay == 0.01);
    t.set_grads();
    adamw.step();
    // decoupled: p *= 1 - lr * wd, then the Adam step
    expect_values(t.a, {1 * 0.95 - 0.1 * step, 2 * 0.95 - 0.1 * step}, kAdamTol, "adamw group 0");
    expect_values(t.b, {3 * (1 - 0.01 * 0.01) - 0.01 * step}, kAdamTol, "adamw group 1");
  }
}

TEST_CASE("AdamW's weight decay: 0.01 unless set, an explicit 0 kept", "[optim][adam]") {
  Tensor p = zeros({1}).requires_grad_();
  CHECK(optim::AdamW({p}, optim::AdamOptions()).options().values.weight_decay == 0.01);
  CHECK(optim::AdamW({p}, optim::AdamOptions().weight_decay(0.0)).options().values.weight_decay == 0.0);
  CHECK(optim::Adam({p}, optim::AdamOptions()).options().values.weight_decay == 0.0);
  CHECK(optim::AdamW({p}, optim::AdamOptions().weight_decay(0.2)).param_groups()[0].weight_decay == 0.2);
}

TEST_CASE("set_lr sets every group, set_group_lr one, bad groups are refused", "[optim][param_groups][errors]") {
  TwoGroups t;
  optim::SGD sgd(t.groups(), optim::SgdOptions(1.0));
  sgd.set_group_lr(1, 0.5);
  CHECK(sgd.param_groups()[0].lr == 0.1);
  CHECK(sgd.param_groups()[1].lr == 0.5);
  CHECK(sgd.param_groups()[1].initial_lr == 0.01);
  sgd.set_lr(0.25);
  CHECK(sgd.param_groups()[0].lr == 0.25);
  CHECK(sgd.param_groups()[1].lr == 0.25);
  expect_error_contains([&] { sgd.set_group_lr(2, 0.1); }, {"group 2", "2 groups"});
  expect_error_contains([&] { optim::SGD({{{t.a}, std::nullopt, -1.0}}, optim::SgdOptions(0.1)); },
                        {"group 0", "weight_decay", "-1"});
  expect_error_contains([&] { optim::SGD({{{t.a}}, {{t.b, t.a}}}, optim::SgdOptions(0.1)); },
                        {"parameter 2", "group 1", "is parameter 0 again"});
}

TEST_CASE("a schedule gives each group what its PyTorch namesake gives it", "[optim][param_groups][lr_schedule]") {
  TwoGroups t;  // initial rates 0.1 and 0.01
  optim::SGD sgd(t.groups(), optim::SgdOptions(0.1).momentum(0.9));
  // ConstantLR (PyTorch's with factor 1) keeps each group's initial rate.
  optim::ConstantLR(0.1).apply(sgd, 7);
  CHECK(sgd.param_groups()[0].lr == 0.1);
  CHECK(sgd.param_groups()[1].lr == 0.01);
  // The warm-up is LinearLR(start_factor=0.2, total_iters=4): each group's initial rate times
  // 0.2 + 0.8 t / 4.
  const optim::CosineWithWarmup warmup(0.1, 4, 10, 0.0, 0.2);
  warmup.apply(sgd, 1);
  CHECK(sgd.param_groups()[0].lr == Approx(0.1 * (0.2 + 0.8 / 4)).epsilon(1e-12));
  CHECK(sgd.param_groups()[1].lr == Approx(0.01 * (0.2 + 0.8 / 4)).epsilon(1e-12));
  // StepLR scales each group's initial rate.
  const optim::StepLR schedule(0.1, 2, 0.5);
  schedule.apply(sgd, 5);
  CHECK(sgd.param_groups()[0].lr == schedule.lr_at(5));
  CHECK(sgd.param_groups()[1].lr == Approx(0.01 * 0.25).epsilon(1e-12));
  // CosineAnnealingLR(T_max=5, eta_min=0.005): one absolute eta_min for both groups, so the second
  // group's rates are eta_min + (0.01 - eta_min) (1 + cos(pi t / 5)) / 2 (PyTorch's printed values:
  // 0.01, 0.00952, 0.00827, 0.00673, 0.00548).
  const optim::CosineWithWarmup cosine(0.1, 0, 5, 0.005);
  const double pytorch[] = {0.01, 0.00952254, 0.00827254, 0.00672746, 0.00547746};
  for (int64_t step = 0; step < 5; ++step) {
    cosine.apply(sgd, step);
    INFO("step " << step);
    CHECK(sgd.param_groups()[1].lr == Approx(pytorch[step]).epsilon(1e-6));  // PyTorch's 6 printed digits
    CHECK(sgd.param_groups()[0].lr == cosine.lr_at(step));
  }
  // OneCycleLR with one max_lr: every group follows it, whatever it started at ...
  const auto onecycle = optim::make_schedule("onecycle", 0.1, 100);
  onecycle->apply(sgd, 0);
  CHECK(sgd.param_groups()[0].lr == Approx(0.1 / 25).epsilon(1e-12));
  CHECK(sgd.param_groups()[1].lr == Approx(0.1 / 25).epsilon(1e-12));
  // ... and with one max_lr per group, each its own.
  const optim::OneCycle per_group(std::vector<double>{0.1, 0.02}, 100);
  per_group.apply(sgd, 0);
  CHECK(sgd.param_groups()[1].lr == Approx(0.02 / 25).epsilon(1e-12));
  // Its momentum is the same for every group (one base_momentum and max_momentum): max_momentum
  // at the start, base_momentum at the peak (step 0.3 * 100 - 1 = 29).
  for (const auto& group : sgd.param_groups()) CHECK(group.momentum == Approx(0.95).epsilon(1e-12));
  per_group.apply(sgd, 29);
  for (const auto& group : sgd.param_groups()) CHECK(group.momentum == Approx(0.85).epsilon(1e-12));
  const optim::OneCycle three(std::vector<double>{0.1, 0.02, 0.3}, 100);
  CHECK(three.group_lr(0, 2, 1.0) == Approx(0.3 / 25).epsilon(1e-12));
  expect_error_contains([&] { optim::OneCycle(std::vector<double>{0.1, 0.02}, 100).group_lr(0, 2, 1.0); },
                        {"OneCycle", "2 max_lrs", "group 2"});
}

TEST_CASE("state_dict with groups: group.<g>.lr, per-parameter state by flat index", "[optim][param_groups]") {
  TwoGroups t;
  optim::Adam first(t.groups(), optim::AdamOptions(1.0));
  t.set_grads();
  first.step();
  first.set_group_lr(1, 0.003);
  const NamedTensors state = first.state_dict();
  const TensorMap entries(state.begin(), state.end());
  CHECK(entries.count("group.0.lr") == 1);
  CHECK(entries.count("group.1.lr") == 1);
  CHECK(entries.count("lr") == 0);
  CHECK(entries.count("exp_avg.1") == 1);  // b, group 1's first parameter, is parameter 1

  TwoGroups u;
  optim::Adam second(u.groups(), optim::AdamOptions(1.0));
  second.load_state_dict(entries);
  CHECK(second.param_groups()[0].lr == 0.1);
  CHECK(second.param_groups()[1].lr == 0.003);
  test::expect_close(second.exp_avg(1), first.exp_avg(1), 0.0, "exp_avg.1");
  CHECK(second.step_count(1) == 1);

  // A state of one group does not fit two, and the reverse.
  optim::Adam one({u.a, u.b}, optim::AdamOptions(1.0));
  expect_error_contains([&] { one.load_state_dict(entries); }, {"unexpected entry", "group."});
  const NamedTensors single = one.state_dict();
  expect_error_contains([&] { second.load_state_dict(TensorMap(single.begin(), single.end())); },
                        {"unexpected entry 'lr'"});
}

TEST_CASE("decay_groups: biases and 1-D parameters get no weight decay", "[optim][param_groups]") {
  const std::vector<std::pair<std::string, Tensor>> named = {
      {"conv.weight", zeros({2, 1, 3, 3})}, {"conv.bias", zeros({2})}, {"bn.weight", zeros({2})},
      {"bn.bias", zeros({2})},              {"fc.weight", zeros({3, 4})}, {"fc.bias", zeros({3})}};
  const std::vector<optim::ParamGroup> groups = optim::decay_groups(named, 5e-4);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].weight_decay == 5e-4);
  CHECK(groups[1].weight_decay == 0.0);
  REQUIRE(groups[0].params.size() == 2);
  CHECK(groups[0].params[0].is_same(named[0].second));
  CHECK(groups[0].params[1].is_same(named[4].second));
  CHECK(groups[1].params.size() == 4);
  CHECK(!groups[0].lr.has_value());
  expect_error_contains([&] { optim::decay_groups(named, -1); }, {"decay_groups", "-1"});
}
