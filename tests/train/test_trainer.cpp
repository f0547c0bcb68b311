// train::Trainer: gradient accumulation gives the full batch's gradients, fp16 keeps the
// right dtypes where they belong, checkpointing changes nothing it should not, bad options fail early.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/generator.h"
#include "kernels/factories.h"
#include "memory/memory.h"
#include "models/sequential.h"
#include "models/zoo.h"
#include "optim/sgd.h"
#include "tests/support/op_contract.h"
#include "train/trainer.h"

using namespace ember;
using test::expect_close;
using test::expect_error_contains;

namespace {

// lr 0: the step leaves the weights alone, so .grad holds exactly what the step gathered.
train::OptimizerFactory frozen_sgd() {
  return [](std::vector<Tensor> params) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::SGD>(std::move(params), optim::SgdOptions(0.0));
  };
}

train::OptimizerFactory sgd(double lr) {
  return [lr](std::vector<Tensor> params) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::SGD>(std::move(params), optim::SgdOptions(lr).momentum(0.9));
  };
}

struct Batch {
  Tensor images, labels;
};

Batch make_batch(int64_t n, uint64_t seed) {
  manual_seed(seed);
  return {randn({n, 1, 28, 28}), rand({n}, {}, 0.0, 10.0).to(kInt64)};
}

std::vector<Tensor> gradients(nn::Module& model) {
  std::vector<Tensor> out;
  for (const Tensor& p : model.parameters()) out.push_back(p.grad().clone());
  return out;
}

}  // namespace

TEST_CASE("Trainer: --accum 4 gives the full batch's gradients (no BatchNorm)", "[trainer]") {
  const Batch b = make_batch(32, 7);
  for (const std::string name : {"mlp", "lenet5"}) {
    INFO(name);
    std::vector<Tensor> grads[2];
    double losses[2];
    for (int run = 0; run < 2; ++run) {
      manual_seed(1);
      auto model = models::make_model(name, Shape{1, 28, 28}, 10);
      train::TrainerOptions o;
      o.accum = run == 0 ? 1 : 4;
      train::Trainer trainer(model, frozen_sgd(), o);
      losses[run] = trainer.step(b.images, b.labels).loss;
      grads[run] = gradients(*model);
    }
    CHECK(losses[1] == Approx(losses[0]).epsilon(1e-6));
    for (size_t i = 0; i < grads[0].size(); ++i)
      expect_close(grads[1][i], grads[0][i], 1e-5, name + " parameter " + std::to_string(i));
  }
}

TEST_CASE("Trainer: an uneven last batch is split with weights, still the batch mean", "[trainer]") {
  const Batch b = make_batch(10, 3);  // 4 micro-batches of 3, 3, 2, 2
  std::vector<Tensor> grads[2];
  for (int run = 0; run < 2; ++run) {
    manual_seed(1);
    auto model = models::make_model("mlp", Shape{1, 28, 28}, 10);
    train::TrainerOptions o;
    o.accum = run == 0 ? 1 : 4;
    train::Trainer trainer(model, frozen_sgd(), o);
    trainer.step(b.images, b.labels);
    grads[run] = gradients(*model);
  }
  for (size_t i = 0; i < grads[0].size(); ++i) expect_close(grads[1][i], grads[0][i], 1e-5, "uneven split");
}

TEST_CASE("Trainer: fp16 keeps f16 parameters, fp32 masters and fp32 BatchNorm statistics", "[trainer]") {
  manual_seed(2);
  auto model = models::make_model("convnet", Shape{1, 28, 28}, 10);
  train::TrainerOptions o;
  o.precision = train::Precision::fp16;
  train::Trainer trainer(model, sgd(0.05), o);
  const Batch b = make_batch(8, 4);
  const train::StepResult r = trainer.step(b.images, b.labels);
  CHECK(r.stepped);
  CHECK(r.loss_scale == 65536.0);
  CHECK(std::isfinite(r.loss));
  for (const Tensor& p : model->parameters()) CHECK(p.dtype() == kFloat16);
  for (const Tensor& buffer : model->buffers())
    if (is_floating(buffer.dtype())) CHECK(buffer.dtype() == kFloat32);
  for (const Tensor& m : trainer.optimizer().parameters()) CHECK(m.dtype() == kFloat32);
  CHECK(trainer.predict(b.images).dtype() == kFloat16);
}

TEST_CASE("Trainer: fp16 trains every zoo model close to fp32", "[trainer]") {
  // One SGD step from the same weights in fp32 and in fp16: the losses and the updated
  // weights agree to f16's precision (weights round to 11 significant bits, activations too).
  const Batch b = make_batch(8, 6);
  for (const std::string& name : models::model_names()) {
    INFO(name);
    std::shared_ptr<nn::Module> models[2];
    double losses[2];
    for (int run = 0; run < 2; ++run) {
      manual_seed(3);
      models[run] = models::make_model(name, Shape{1, 28, 28}, 10);
      train::TrainerOptions o;
      o.precision = run == 0 ? train::Precision::fp32 : train::Precision::fp16;
      train::Trainer trainer(models[run], sgd(0.05), o);
      const train::StepResult r = trainer.step(b.images, b.labels);
      CHECK(r.stepped);
      losses[run] = r.loss;
    }
    CHECK(losses[1] == Approx(losses[0]).epsilon(2e-2));
    const std::vector<Tensor> p32 = models[0]->parameters(), p16 = models[1]->parameters();
    REQUIRE(p32.size() == p16.size());
    for (size_t i = 0; i < p32.size(); ++i) {
      REQUIRE(p16[i].dtype() == kFloat16);
      expect_close(p16[i], p32[i], 5e-3, name + " parameter " + std::to_string(i) + " after one fp16 step");
    }
  }
}

TEST_CASE("Trainer: checkpointing gives the same step as without", "[trainer]") {
  const Batch b = make_batch(8, 5);
  std::vector<Tensor> grads[2];
  double losses[2];
  for (int run = 0; run < 2; ++run) {
    manual_seed(1);
    auto model = models::make_model("convnet", Shape{1, 28, 28}, 10);
    train::TrainerOptions o;
    o.checkpoint = run == 0 ? train::CheckpointPolicy::none() : train::CheckpointPolicy::sqrt();
    train::Trainer trainer(model, frozen_sgd(), o);
    const int64_t layers = static_cast<int64_t>(static_cast<nn::Sequential&>(*model).size());
    const auto sqrt_segments = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(layers))));
    CHECK(trainer.checkpoint_segments() == (run == 0 ? 0 : sqrt_segments));
    losses[run] = trainer.step(b.images, b.labels).loss;
    grads[run] = gradients(*model);
  }
  CHECK(losses[1] == losses[0]);
  for (size_t i = 0; i < grads[0].size(); ++i) expect_close(grads[1][i], grads[0][i], 0.0, "checkpointed");
}

TEST_CASE("TrainerOptions: bad values fail before training, naming the field, the value and what is allowed", "[trainer]") {
  train::TrainerOptions t;
  t.accum = 3;
  expect_error_contains([&] { t.check(64); }, {"accum = 3", "does not divide", "batch = 64"});
  t.check(63);  // 3 micro-batches of 21
  t.accum = 0;
  expect_error_contains([&] { t.check(); }, {"accum = 0", "at least 1"});
  auto mlp = models::make_model("mlp", Shape{1, 28, 28}, 10);
  expect_error_contains([&] { train::Trainer trainer(mlp, frozen_sgd(), t); }, {"accum = 0"});
  t = {};
  t.checkpoint = train::CheckpointPolicy::fixed(0);
  expect_error_contains([&] { t.check(); }, {"checkpoint", "0 segments", "at least 1"});
  expect_error_contains([&] { train::CheckpointPolicy::parse("often"); }, {"checkpoint", "'often'", "none, sqrt"});
  // A segment count is plain digits (std::stoll used to skip spaces and take a sign).
  for (const char* text : {" 3", "+3", "3 ", "0x3", "3e0", "99999999999999999999", ""})
    expect_error_contains([&] { train::CheckpointPolicy::parse(text); }, {"checkpoint", std::string("'") + text + "'", "none, sqrt"});
  expect_error_contains([&] { train::parse_precision("fp8"); }, {"precision", "'fp8'", "fp32 or fp16"});
  train::TrainerOptions o;
  o.checkpoint = train::CheckpointPolicy::fixed(99);
  auto lenet = models::make_model("lenet5", Shape{1, 28, 28}, 10);
  expect_error_contains([&] { train::Trainer trainer(lenet, frozen_sgd(), o); },
                        {"99 segments", "12 top-level layers", "at most 12"});
}

TEST_CASE("Trainer: an out-of-memory step says which techniques it used and which are left", "[trainer][oom]") {
  const Batch b = make_batch(64, 2);
  manual_seed(1);
  auto model = models::make_model("lenet5", Shape{1, 28, 28}, 10);
  train::Trainer trainer(model, sgd(0.01));
  empty_cache(kCPU);
  set_cpu_memory_limit(static_cast<size_t>(memory_stats(kCPU).reserved_bytes.current) + 256 * 1024);
  try {
    trainer.step(b.images, b.labels);
    FAIL("expected an OutOfMemoryError");
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find("out of memory on cpu") != std::string::npos);
    CHECK(message.find("This step ran with precision = fp32, checkpoint = none, accum = 1 (micro-batch 64); still to "
                       "try: precision = fp16, checkpoint = sqrt, accum = 2 (micro-batch 32).") != std::string::npos);
  }
  set_cpu_memory_limit(0);
}
