// ember plan against ember bench-train: the prediction (the real code on shape-only tensors)
// and the measurement of the same workload, on the CPU and on a GPU.
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "apps/bench_train_command.h"
#include "apps/plan_command.h"
#include "apps/memory_budget.h"
#include "apps/zoo_workload.h"
#include "core/simulation.h"
#include "kernels/factories.h"
#include "memory/memory.h"
#include "memory/simulation.h"
#include "models/zoo.h"
#include "tests/apps/bench_run.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"
#include "train/plan/budget_fit.h"

using namespace ember;
using namespace ember::apps;

namespace {

// The bench-train workload of a model with the techniques as flags name them.
train::Workload workload(const std::string& model, int64_t batch, const std::string& optimizer, const TechniqueOptions& t,
                         Device device = kCPU) {
  return zoo_workload(model, batch, optimizer, trainer_options(t, batch), device);
}

// A CPU memory limit for one scope, over an empty cache; lifted (and the cache emptied) on the way out.
struct CpuMemoryLimit {
  explicit CpuMemoryLimit(size_t bytes) {
    empty_cache(kCPU);
    REQUIRE(memory_stats(kCPU).reserved_bytes.current == 0);
    set_cpu_memory_limit(bytes);
  }
  ~CpuMemoryLimit() {
    set_cpu_memory_limit(0);
    empty_cache(kCPU);
  }
};

struct Case {
  const char* model;
  int64_t batch;
  const char* precision;
  const char* checkpoint;
  const char* optimizer;
};

// The measured peaks of one bench-train step after one warm-up step, net of what the
// process's allocator already held.
nlohmann::ordered_json measure(const Case& c, Device device = kCPU) {
  empty_cache(device);
  BenchTrainOptions o = test::bench_run(c.model, c.batch, 1, 1);
  o.run.device = device.str();
  o.run.optimizer = c.optimizer;
  o.run.technique = {c.precision, c.checkpoint, 1};
  o.run.json = true;
  std::ostringstream out;
  return bench_train_command(o, out);
}

// The plan and the measurement of each case on `device`: peaks within 5% (allocated) and 10%
// (reserved), every category to the byte.
void expect_plans_match(Device device, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    INFO(c.model << " batch " << c.batch << " " << c.precision << " checkpoint " << c.checkpoint << " " << c.optimizer
                 << " on " << device);
    REQUIRE(memory_stats(device).allocated_bytes.current == 0);  // nothing else live: the peaks compare as they are
    const train::StepPrediction p =
        train::plan_step(workload(c.model, c.batch, c.optimizer, {c.precision, c.checkpoint, 1}, device), 1);
    const nlohmann::ordered_json m = measure(c, device);
    const double allocated = m["peak_bytes"].get<double>(), reserved = m["peak_reserved_bytes"].get<double>();
    CHECK(std::abs(static_cast<double>(p.peak_bytes) - allocated) <= 0.05 * allocated);
    CHECK(std::abs(static_cast<double>(p.peak_reserved_bytes) - reserved) <= 0.10 * reserved);
    for (int k = 0; k < kNumMemoryCategories; ++k) {
      const char* name = category_name(static_cast<MemoryCategory>(k));
      INFO(name);
      CHECK(p.peak_by_category[static_cast<size_t>(k)] == m["peak_bytes_by_category"][name].get<int64_t>());
    }
    CHECK(p.checkpoint_segments == m["checkpoint_segments"].get<int64_t>());
  }
}

}  // namespace

TEST_CASE("ember plan predicts bench-train's peak allocated and reserved bytes by category", "[plan][training]") {
  expect_plans_match(kCPU, {{"mlp", 32, "fp32", "none", "sgd"},
                            {"lenet5", 32, "fp16", "sqrt", "adam"},
                            {"convnet", 32, "fp32", "sqrt", "adam"},
                            {"convnet", 32, "fp16", "none", "sgd"},
                            {"resnet20", 32, "fp32", "sqrt", "sgd"}});
}

// On a GPU the plan simulates ember's own convolution's workspace (kernels/conv_scratch_cuda.h);
// on an H200 the plans of LeNet-5, ConvNet and ResNet-20 (batch 64, fp32, SGD) matched its
// measured peaks to the byte (docs/memory.md).
EMBER_CUDA_TEST_CASE("ember plan predicts bench-train's peak bytes by category on cuda", "[plan][training]") {
  expect_plans_match(kCUDA, {{"lenet5", 64, "fp32", "none", "sgd"},
                             {"convnet", 64, "fp32", "none", "sgd"},
                             {"resnet20", 32, "fp32", "sqrt", "sgd"},
                             {"lenet5", 32, "fp16", "sqrt", "adam"},
                             {"convnet", 32, "fp16", "none", "sgd"}});
}

TEST_CASE("ember plan takes well under a second for every zoo model and touches no memory", "[plan]") {
  reset_peak_stats(kCPU);
  const MemoryStats before = memory_stats(kCPU);
  for (const std::string& model : models::model_names()) {
    INFO(model);
    const train::StepPrediction p = train::plan_step(workload(model, 256, "adam", {"fp16", "sqrt", 1}), 2);
    CHECK(p.peak_bytes > 0);
#if defined(NDEBUG) && !defined(EMBER_SANITIZED_BUILD)
    // A promise of the optimised build. Under ASan + UBSan (-O1, every access checked) the same
    // simulation runs ~9x slower: ResNet-20's here 52 ms -> 450 ms alone, 1028 ms beside another test.
    CHECK(p.simulate_ms < 1000.0);
#endif
    CHECK_FALSE(p.peak_op.empty());
  }
  // A step of 256 images allocates tens of MiB; the real allocator saw none of it.
  CHECK(memory_stats(kCPU).allocated_bytes.peak - before.allocated_bytes.current < (1 << 20));
  CHECK_FALSE(simulating());
}

TEST_CASE("a simulation hands out address space, skips the math, and gives zeros to host reads", "[plan]") {
  SimulationScope sim(kCPU);
  Tensor a = ones({256, 256});
  Tensor b = matmul(a, a);
  CHECK(b.shape() == Shape{256, 256});
  CHECK(sim.stats().allocated_bytes.current == 2 * 256 * 256 * 4);
  CHECK(b.sum().item<float>() == 0.0f);  // not 256^3: nothing was computed
  CHECK_THROWS(SimulationScope(kCPU));   // no nesting
}

TEST_CASE("ember plan prints a table, or with --json the prediction", "[plan][cli]") {
  PlanOptions o;
  o.run.model = "lenet5";
  o.run.batch = 16;
  std::ostringstream table;
  plan_command(o, table);
  CHECK(table.str().find("predicted peak") != std::string::npos);
  CHECK(table.str().find("activation") != std::string::npos);
  o.run.json = true;
  std::ostringstream json;
  const nlohmann::ordered_json j = plan_command(o, json);
  CHECK(nlohmann::json::parse(json.str())["peak_bytes"].get<int64_t>() == j["peak_bytes"].get<int64_t>());
  CHECK(j["peak_phase"].get<std::string>() != "other");
  o.run.device = "cuda";  // planned without a GPU
  CHECK(plan_command(o, json)["device"].get<std::string>() == "cuda:0");
}

TEST_CASE("a memory budget picks settings whose real step runs under that memory limit", "[plan][training]") {
  struct BudgetCase {
    const char* model;
    int64_t batch;
    size_t budget;
  };
  for (const BudgetCase& c : {BudgetCase{"convnet", 256, 48u << 20}, BudgetCase{"resnet20", 128, 32u << 20},
                              BudgetCase{"lenet5", 1024, 32u << 20}}) {
    INFO(c.model << " batch " << c.batch << " budget " << (c.budget >> 20) << " MiB");
    train::Workload spec = zoo_workload(c.model, c.batch, "sgd");
    spec.data_batches = 3;  // as ember train's loader: two prefetched and one in use
    const train::BudgetFit fit = train::fit_memory_budget(spec, 1, c.budget);
    REQUIRE(fit.chosen);
    CHECK(fit.chosen->prediction.peak_reserved_bytes <= static_cast<int64_t>(c.budget));
    // Everything tried before the choice was cheaper and did not fit.
    for (const train::BudgetCandidate& k : fit.candidates) {
      if (!k.tried || k.prediction.fits) break;
      CHECK(k.slowdown <= fit.chosen->slowdown);
    }
    const CpuMemoryLimit limit(c.budget);
    spec.trainer = fit.chosen->trainer;
    CHECK_NOTHROW([&] {
      train::BuiltWorkload w = train::build_workload(spec);
      w.step(0);
      w.step(1);
    }());
  }
}

TEST_CASE("a memory budget that nothing fits names the smallest peak possible", "[plan]") {
  const train::Workload spec = zoo_workload("resnet20", 256, "sgd");
  const train::BudgetFit fit = train::fit_memory_budget(spec, 1, 4u << 20);
  CHECK_FALSE(fit.chosen);
  const std::string message = nothing_fits_message(fit, "resnet20", 256);
  CHECK(message.find("smallest peak possible") != std::string::npos);
  // At the smallest micro-batch the weights dominate, so fp16 (which adds fp32 masters) need not win.
  CHECK(message.find(describe(fit.smallest.trainer, 256)) != std::string::npos);
  CHECK(fit.smallest.prediction.peak_bytes > (4 << 20));
  PlanOptions o;
  o.run.model = "lenet5";
  o.run.memory_budget = "1MiB";
  std::ostringstream out;
  CHECK_THROWS_WITH(plan_command(o, out), Catch::Matchers::Contains("no combination"));
  o.run.memory_budget = "64MiB";
  o.run.technique.accum = 2;
  CHECK_THROWS_WITH(plan_command(o, out), Catch::Matchers::Contains("leave them out"));
}

TEST_CASE("an out-of-memory in a training step quotes the planner for each technique", "[plan][training]") {
  BenchTrainOptions o = test::bench_run("convnet", 256, 1, 0);
  o.run.json = true;
  const CpuMemoryLimit limit(40u << 20);
  std::ostringstream out;
  std::string message;
  try {
    bench_train_command(o, out);
  } catch (const OutOfMemoryError& e) {
    message = e.what();
  }
  INFO(message);
  // Each figure is the planner's prediction for that one change.
  for (const auto& [flag, technique] : std::vector<std::pair<std::string, TechniqueOptions>>{
           {"--precision fp16: ~", {"fp16", "none", 1}},
           {"--checkpoint sqrt: ~", {"fp32", "sqrt", 1}},
           {"--accum 2: ~", {"fp32", "none", 2}},
           {"--accum 4: ~", {"fp32", "none", 4}}}) {
    const train::Workload spec = workload(o.run.model, o.run.batch, o.run.optimizer, technique);
    CHECK_THAT(message, Catch::Matchers::Contains(flag + format_bytes(train::plan_step(spec, o.run.threads).peak_reserved_bytes)));
  }
  // And what --memory-budget would choose for this device, which then runs under the same limit.
  CHECK_THAT(message, Catch::Matchers::Contains("--memory-budget 40MiB"));
  o.run.memory_budget = "40MiB";
  o.warmup = 1;  // the planner predicts a steady-state step
  empty_cache(kCPU);
  const nlohmann::ordered_json j = bench_train_command(o, out);
  CHECK(j["accum"].get<int64_t>() > 1);
  CHECK(j["peak_reserved_bytes"].get<int64_t>() <= (40 << 20));
  CHECK(j["predicted_peak_bytes"].get<int64_t>() == j["peak_bytes"].get<int64_t>());
  const TechniqueOptions chosen{j["precision"].get<std::string>(), j["checkpoint"].get<std::string>(),
                                j["accum"].get<int64_t>()};
  CHECK_THAT(message, Catch::Matchers::Contains("would run " + describe(trainer_options(chosen, o.run.batch), o.run.batch)));
}
