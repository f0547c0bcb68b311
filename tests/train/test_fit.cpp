// train::fit and train::evaluate: a whole run as a library call, on a model and a loss of the
// caller's own; resuming from a checkpoint ends with the uninterrupted run's bytes.
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "core/generator.h"
#include "data/data_loader.h"
#include "data/sample_dataset.h"
#include "kernels/factories.h"
#include "models/activation.h"
#include "models/linear.h"
#include "models/sequential.h"
#include "optim/sgd.h"
#include "tests/data/temp_dir.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"
#include "train/fit.h"

using namespace ember;
using test::expect_error_contains;

namespace {

// y = 2 x0 - x1 + 0.5 x2 + 0.1, with a little noise: a regression, so labels mean nothing.
std::shared_ptr<const data::SampleDataset> regression_points(int64_t n) {
  return data::lambda_dataset(n, [](int64_t i) {
    const float x0 = static_cast<float>(i % 7) / 7.0f, x1 = static_cast<float>(i % 5) / 5.0f,
                x2 = static_cast<float>(i % 3) / 3.0f;
    const float noise = 0.01f * static_cast<float>((i * 37) % 11 - 5) / 5.0f;
    return data::Sample{from_vector<float>({x0, x1, x2}, {3}), 0,
                        from_vector<float>({2 * x0 - x1 + 0.5f * x2 + 0.1f + noise}, {1})};
  });
}

// A small network of the test's own, trained with mean squared error.
std::unique_ptr<train::Trainer> regression_trainer(uint64_t seed, Device device = kCPU) {
  manual_seed(seed);
  auto model = std::make_shared<nn::Sequential>(nn::Linear(3, 16), nn::ReLU(), nn::Linear(16, 1));
  model->to(device);
  train::TrainerOptions o;
  o.loss = [](const Tensor& y, const Tensor& t) { return mse_loss(y, t); };
  return std::make_unique<train::Trainer>(
      model,
      [](std::vector<Tensor> params) -> std::unique_ptr<optim::Optimizer> {
        return std::make_unique<optim::SGD>(std::move(params), optim::SgdOptions(0.05).momentum(0.9));
      },
      o);
}

data::DataLoaderOptions loader_options(bool shuffle, Device device = kCPU) {
  return data::DataLoaderOptions().batch_size(16).shuffle(shuffle).seed(3).device(device);
}

// Every tensor of a state_dict as its bytes, for a bit-for-bit comparison.
std::vector<std::vector<float>> values_of(const train::Trainer& trainer) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, t] : trainer.state_dict()) out.push_back(t.to(kCPU).to(DType::f32).to_vector<float>());
  return out;
}

}  // namespace

TEST_CASE("train::fit fits a regression of the caller's own model and loss, and evaluates it", "[fit]") {
  const auto points = regression_points(240);
  auto trainer = regression_trainer(1);
  data::DataLoader train_loader(points, loader_options(true)), eval_loader(points, loader_options(false));
  const train::Evaluation before = train::evaluate(trainer->model(), eval_loader, trainer->options().loss);
  train::FitOptions o;
  o.epochs = 30;
  int64_t steps_seen = 0, epochs_seen = 0;
  train::FitCallbacks c;
  c.on_step = [&](const train::StepProgress& p) {
    ++steps_seen;
    CHECK(p.samples_done <= p.samples_total);
  };
  c.on_epoch = [&](const train::EpochResult& e) { CHECK(e.epoch == ++epochs_seen); };
  const train::FitResult r = train::fit(*trainer, train_loader, &eval_loader, o, c);
  CHECK(epochs_seen == 30);
  CHECK(steps_seen == 30 * 15);
  CHECK(r.steps - r.first_step == 30 * 15);
  REQUIRE(r.epochs.size() == 30);
  REQUIRE(r.final_eval);
  INFO("mean squared error before " << before.loss << ", after " << r.final_eval->loss);
  CHECK(r.final_eval->loss < before.loss / 20);
  CHECK(r.final_eval->accuracy == 0.0);  // targets, not class labels: no accuracy
  CHECK(r.epochs.back().loss == r.final_loss);
  CHECK(r.epochs.back().memory.allocated_bytes.peak > 0);
  // evaluate() again gives what fit reported after the last epoch.
  CHECK(train::evaluate(trainer->model(), eval_loader, trainer->options().loss).loss == r.final_eval->loss);
}

namespace {

void expect_fit_resume_bitwise(Device device) {
  test::TempDir dir;
  const auto points = regression_points(96);
  train::FitOptions o;
  o.epochs = 3;
  o.identity = {{"model", "two layers"}, {"batch", "16"}};
  // The uninterrupted run.
  auto whole = regression_trainer(5, device);
  {
    data::DataLoader loader(points, loader_options(true, device));
    train::fit(*whole, loader, nullptr, o);
  }
  // A run stopped in its second epoch, after a checkpoint every 4 steps.
  o.save = dir.file("run.ckpt");
  o.save_every = 4;
  {
    auto stopped = regression_trainer(5, device);
    data::DataLoader loader(points, loader_options(true, device));
    train::FitCallbacks c;
    c.on_step = [&](const train::StepProgress& p) {
      if (p.epoch == 2 && p.samples_done == 5 * 16) throw std::runtime_error("killed");
    };
    CHECK_THROWS_WITH(train::fit(*stopped, loader, nullptr, o, c), "killed");
  }
  // A new process, as it were: the same trainer built afresh, resumed.
  auto resumed = regression_trainer(77, device);  // its initial weights do not matter: the checkpoint replaces them
  o.resume = o.save;
  data::DataLoader loader(points, loader_options(true, device));
  const train::FitResult r = train::fit(*resumed, loader, nullptr, o);
  CHECK(r.start_epoch == 1);
  CHECK(r.first_step == 8);  // 6 steps an epoch; the last checkpoint was every 4 steps' at step 8
  CHECK(values_of(*resumed) == values_of(*whole));
  // A different run refuses the checkpoint, naming the option.
  o.identity["batch"] = "32";
  expect_error_contains([&] { train::fit(*regression_trainer(5, device), loader, nullptr, o); },
                        {"run.ckpt", "saved with batch = 16", "this one has batch = 32"});
}

}  // namespace

TEST_CASE("train::fit resumed from a checkpoint ends with the bytes of the run that never stopped", "[fit]") {
  expect_fit_resume_bitwise(kCPU);
}
EMBER_CUDA_TEST_CASE("train::fit resumed on cuda from a checkpoint ends with the bytes of the run that never stopped",
                     "[fit]") {
  expect_fit_resume_bitwise(kCUDA);
}

TEST_CASE("FitOptions: a bad value fails before training, naming the field", "[fit]") {
  auto trainer = regression_trainer(1);
  data::DataLoader loader(regression_points(32), loader_options(false));
  train::FitOptions o;
  o.epochs = 0;
  expect_error_contains([&] { train::fit(*trainer, loader, nullptr, o); }, {"epochs = 0"});
  o.epochs = 1;
  o.save_every = 2;
  expect_error_contains([&] { train::fit(*trainer, loader, nullptr, o); }, {"save_every = 2", "needs save"});
  CHECK(trainer->steps() == 0);
}
