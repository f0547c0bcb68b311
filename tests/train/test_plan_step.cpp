// train/plan/: the planner predicts the step of a model and loss of the caller's own, the budget
// fit chooses techniques that really fit, and neither disturbs the caller's random generator.
#include <memory>
#include <vector>

#include "autograd/ops.h"
#include "core/generator.h"
#include "memory/memory.h"
#include "models/activation.h"
#include "models/linear.h"
#include "models/sequential.h"
#include "optim/make_optimizer.h"
#include "tests/support/expect.h"
#include "train/plan/budget_fit.h"
#include "train/plan/step_plan.h"

using namespace ember;

namespace {

// A regression MLP of the test's own, its targets [8] f32 and mean squared error.
train::Workload regression_workload(int64_t batch) {
  train::Workload w;
  w.model = [] {
    return std::make_shared<nn::Sequential>(nn::Linear(64, 256), nn::ReLU(), nn::Linear(256, 256), nn::ReLU(),
                                            nn::Linear(256, 8));
  };
  w.optimizer = [](std::vector<Tensor> params) { return optim::make_optimizer(optim::OptimizerSpec{"adam", 1e-3}, std::move(params)); };
  w.trainer.loss = [](const Tensor& y, const Tensor& t) { return mse_loss(y, t); };
  w.batch = batch;
  w.sample = Shape{64};
  w.target = Shape{8};
  w.data_batches = 2;
  return w;
}

}  // namespace

TEST_CASE("plan_step predicts a real step of a model and loss of the caller's own, to the byte", "[plan]") {
  for (int64_t accum : {1, 4}) {
    INFO("accum " << accum);
    train::Workload w = regression_workload(128);
    w.trainer.accum = accum;
    const train::StepPrediction p = train::plan_step(w, 1);
    CHECK(p.fits);
    empty_cache(kCPU);
    REQUIRE(memory_stats(kCPU).allocated_bytes.current == 0);
    {
      train::BuiltWorkload b = train::build_workload(w);
      b.step(0);  // the optimizer's state is made in the first step
      reset_peak_stats(kCPU);
      b.step(1);
      const MemoryStats m = memory_stats(kCPU);
      CHECK(p.peak_bytes == m.allocated_bytes.peak);
      for (int c = 0; c < kNumMemoryCategories; ++c)
        CHECK(p.peak_by_category[static_cast<size_t>(c)] == m.by_category[static_cast<size_t>(c)].peak);
    }
    empty_cache(kCPU);
  }
}

TEST_CASE("fit_memory_budget picks techniques whose real step runs under the budget, and leaves the generator alone",
          "[plan]") {
  const train::Workload w = regression_workload(256);
  const train::StepPrediction plain = train::plan_step(w, 1);
  const size_t budget = static_cast<size_t>(plain.peak_reserved_bytes) * 3 / 4;  // the plain step does not fit
  manual_seed(42);
  const GeneratorState before = generator_state();
  const train::BudgetFit fit = train::fit_memory_budget(w, 1, budget);
  CHECK(generator_state().seed == before.seed);
  CHECK(generator_state().offset == before.offset);
  REQUIRE(fit.chosen);
  CHECK(fit.chosen->slowdown > 1.0);  // the cheapest (fp32, no checkpoint, one micro-batch) did not fit
  CHECK(static_cast<size_t>(fit.chosen->prediction.peak_reserved_bytes) + train::budget_headroom(budget) <= budget);
  CHECK(bool(fit.chosen->trainer.loss));  // the workload's own loss is kept
  empty_cache(kCPU);
  set_cpu_memory_limit(budget);
  train::Workload chosen = w;
  chosen.trainer = fit.chosen->trainer;
  CHECK_NOTHROW([&] {
    train::BuiltWorkload b = train::build_workload(chosen);
    b.step(0);
    b.step(1);
  }());
  set_cpu_memory_limit(0);
  empty_cache(kCPU);
  // Each technique the step does not use yet, one change at a time, simulated.
  const std::vector<train::TechniqueChange> changes = train::technique_changes(w, 1);
  REQUIRE(changes.size() >= 3);  // as run, fp16, checkpoint sqrt (the accums: the batch allows two)
  CHECK(changes[0].trainer.accum == 1);
  CHECK(changes[0].prediction.peak_bytes == plain.peak_bytes);
}
