// Training checkpoints (train/training_checkpoint.h) and the Trainer's state_dict: a Trainer
// rebuilt from a checkpoint continues bit for bit; bad files and a non-finite loss are named.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/generator.h"
#include "data/safetensors.h"
#include "kernels/factories.h"
#include "models/zoo.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "tests/data/temp_dir.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"
#include "tests/support/random_batch.h"
#include "train/trainer.h"
#include "train/training_checkpoint.h"
#include "train/weights_file.h"

using namespace ember;
using test::Batch;
using test::make_batch;
using test::expect_error_contains;

namespace {

train::OptimizerFactory factory(const std::string& name) {
  return [name](std::vector<Tensor> params) -> std::unique_ptr<optim::Optimizer> {
    if (name == "adam") return std::make_unique<optim::Adam>(std::move(params), optim::AdamOptions(2e-3));
    return std::make_unique<optim::SGD>(std::move(params), optim::SgdOptions(0.05).momentum(0.9).nesterov());
  };
}

std::unique_ptr<train::Trainer> make_trainer(const std::string& model, const std::string& optimizer,
                                             train::Precision precision, uint64_t init_seed, Device device = kCPU) {
  manual_seed(init_seed);
  train::TrainerOptions o;
  o.precision = precision;
  auto net = models::make_model(model, Shape{1, 28, 28}, 10);
  net->to(device);
  return std::make_unique<train::Trainer>(net, factory(optimizer), o);
}

void expect_resume_bitwise(Device device) {
  struct Case {
    const char* model;
    const char* optimizer;
    train::Precision precision;
  };
  for (const Case c : {Case{"lenet5", "sgd", train::Precision::fp32}, Case{"convnet", "adam", train::Precision::fp16}}) {
    INFO(c.model << " " << c.optimizer << " " << train::precision_name(c.precision) << " on " << device);
    test::TempDir dir;
    const std::string path = dir.file("run.ckpt");
    const auto step = [device](train::Trainer& trainer, uint64_t s) {
      const Batch b = make_batch(8, 10 + s);
      return trainer.step(b.images.to(device), b.labels.to(device)).loss;
    };
    auto original = make_trainer(c.model, c.optimizer, c.precision, 1, device);
    for (uint64_t s = 0; s < 2; ++s) step(*original, s);
    manual_seed(99);  // the generator state the checkpoint must restore
    train::save_training_checkpoint(path, *original, {0, 2, 4.5, 3, 16}, {{"model", c.model}});
    const GeneratorState saved_generator = generator_state();

    auto resumed = make_trainer(c.model, c.optimizer, c.precision, 2, device);  // other initial weights
    const train::TrainingCheckpoint checkpoint = train::read_training_checkpoint(path);
    CHECK(checkpoint.position.batch == 2);
    CHECK(checkpoint.position.loss_sum == 4.5);
    CHECK(checkpoint.position.seen == 16);
    CHECK(checkpoint.metadata.at("model") == c.model);
    manual_seed(5);
    train::restore(checkpoint, *resumed);
    CHECK(generator_state().seed == saved_generator.seed);
    CHECK(generator_state().offset == saved_generator.offset);
    CHECK(resumed->steps() == 2);
    CHECK(resumed->loss_scale() == original->loss_scale());

    for (uint64_t s = 2; s < 4; ++s) {
      const double a = step(*original, s);
      CHECK(step(*resumed, s) == a);
    }
    const std::vector<Tensor> pa = original->model().parameters(), pb = resumed->model().parameters();
    for (size_t i = 0; i < pa.size(); ++i) test::expect_close(pb[i].to(kCPU), pa[i].to(kCPU), 0.0, "parameter after resume");
    const std::vector<Tensor> ba = original->model().buffers(), bb = resumed->model().buffers();
    for (size_t i = 0; i < ba.size(); ++i) test::expect_close(bb[i].to(kCPU), ba[i].to(kCPU), 0.0, "buffer after resume");

    // The weights inside read as plain weights.
    auto plain = models::make_model(c.model, Shape{1, 28, 28}, 10);
    train::load_weights(path, *plain);
  }
}

}  // namespace

TEST_CASE("training checkpoint: a rebuilt Trainer continues bit for bit", "[trainer]") { expect_resume_bitwise(kCPU); }
EMBER_CUDA_TEST_CASE("training checkpoint: a rebuilt Trainer on cuda continues bit for bit", "[trainer]") {
  expect_resume_bitwise(kCUDA);
}

TEST_CASE("training checkpoint: a weights file or a bad field is named", "[trainer]") {
  test::TempDir dir;
  auto trainer = make_trainer("mlp", "sgd", train::Precision::fp32, 1);
  train::save_weights(dir.file("w.safetensors"), trainer->model());
  expect_error_contains([&] { (void)train::read_training_checkpoint(dir.file("w.safetensors")); },
                        {"w.safetensors", "not a training checkpoint", "load_weights"});

  const std::string path = dir.file("run.ckpt");
  train::save_training_checkpoint(path, *trainer, {});
  data::SafetensorsMetadata metadata;
  TensorMap state = data::load_safetensors(path, &metadata);
  metadata["next_batch"] = "-3";
  data::save_safetensors(path, NamedTensors(state.begin(), state.end()), metadata);
  expect_error_contains([&] { (void)train::read_training_checkpoint(path); }, {"run.ckpt", "next_batch", "-3"});

  expect_error_contains([&] { train::save_training_checkpoint(path, *trainer, {}, {{"next_epoch", "1"}}); },
                        {"next_epoch", "the checkpoint's own"});

  // Another model's checkpoint: the tensor and both shapes.
  auto other = make_trainer("lenet5", "sgd", train::Precision::fp32, 1);
  train::save_training_checkpoint(path, *other, {});
  expect_error_contains([&] { train::restore(train::read_training_checkpoint(path), *trainer); }, {"run.ckpt", "has no tensor"});
}

TEST_CASE("Trainer: a NaN loss under fp32 stops before the update, naming the step", "[trainer]") {
  auto trainer = make_trainer("mlp", "sgd", train::Precision::fp32, 1);
  const Batch good = make_batch(8, 3);
  trainer->step(good.images, good.labels);
  const std::vector<Tensor> before = [&] {
    std::vector<Tensor> v;
    for (const Tensor& p : trainer->model().parameters()) v.push_back(p.detach().clone());
    return v;
  }();
  Tensor poisoned = good.images.clone();
  poisoned.fill_(std::numeric_limits<float>::quiet_NaN());
  expect_error_contains([&] { trainer->step(poisoned, good.labels); },
                        {"loss of step 2 is nan", "weights are those after step 1", "DetectAnomalyGuard"});
  const std::vector<Tensor> after = trainer->model().parameters();
  for (size_t i = 0; i < after.size(); ++i) test::expect_close(after[i], before[i], 0.0, "weights after a NaN loss");
  CHECK(trainer->steps() == 1);

  // Under fp16 the loss scaler owns the case: the step is skipped, no error.
  auto fp16 = make_trainer("mlp", "sgd", train::Precision::fp16, 1);
  CHECK_FALSE(fp16->step(poisoned, good.labels).stepped);
}
