// train::Trainer: gradient accumulation gives the full batch's gradients, fp16 keeps the
// right dtypes where they belong, checkpointing changes nothing it should not, bad options fail early.
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "core/generator.h"
#include "kernels/factories.h"
#include "kernels/ops.h"
#include "memory/memory.h"
#include "models/activation.h"
#include "models/conv2d.h"
#include "models/flatten.h"
#include "models/linear.h"
#include "models/sequential.h"
#include "models/zoo.h"
#include "optim/sgd.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"
#include "tests/support/random_batch.h"
#include "train/trainer.h"

using namespace ember;
using namespace ember::test;

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

// On the CPU, whatever the model's device.
std::vector<Tensor> gradients(nn::Module& model) {
  std::vector<Tensor> out;
  for (const Tensor& p : model.parameters()) out.push_back(p.grad().to(kCPU).clone());
  return out;
}

// What bounds the rounding error of one cross-entropy step of a Sequential of Linear, Conv2d,
// ReLU, 2x2 max pools and Flatten (the zoo's mlp and lenet5), as tests/support/error_bound.h
// bounds one sum: a chain of sums of n_1, n_2, ... terms, in any order, is within gamma(n_1 + n_2
// + ...) of exact times the same chain on absolute values (Higham, Accuracy and Stability, 3.5).
// That chain is the network run in fp64 on |x|, |W|, |b| with the real run's ReLU masks and max
// pool choices, and backward from a seed that bounds dlogits = (p - onehot) / N and its error:
// the logits' error dz moves p by p (|dz| + sum p |dz|) and the log-probabilities by as much, the
// backward's own roundings are of p + onehot. First order; a pre-activation or a window's
// runner-up within rounding of its rival would move a whole term, which no such bound covers (in
// f64, where this bound is used, the odds of that on random data are negligible).
struct StepMagnitudes {
  std::vector<Tensor> grads;     // like model.parameters(), fp64
  std::vector<int64_t> lengths;  // the chain of sums each gradient is: forward, softmax, backward, its own
  double loss = 0;
  int64_t loss_length = 0;
};

// 1 where x > 0, else 0 (fp64, like x).
Tensor positive(const Tensor& x) {
  std::vector<double> v = x.to_vector<double>();
  for (double& e : v) e = e > 0 ? 1.0 : 0.0;
  return from_vector<double>(v, x.shape(), TensorOptions(kFloat64));
}

StepMagnitudes step_magnitudes(nn::Module& model, const Tensor& images, const Tensor& labels) {
  NoGradGuard real_runs_without_grad;
  const nn::Sequential& layers = dynamic_cast<const nn::Sequential&>(model);
  const int64_t batch = images.size(0);
  Tensor real = images, a = abs(images.to(kFloat64));  // the run, and its absolute-value chain
  std::vector<Tensor> leaves;
  std::vector<int64_t> own;  // each gradient's own sum: over the batch, and a conv's output positions
  int64_t forward = 0, backward = 0;
  const auto leaf = [&](const Tensor& p) {
    if (!p.defined()) return Tensor();
    leaves.push_back(abs(p.detach().to(kFloat64)).requires_grad_());
    return leaves.back();
  };
  for (size_t i = 0; i < layers.size(); ++i) {
    nn::Module& layer = *layers[i];
    const Tensor out = layer.forward(real);
    AutoGradMode chain_with_grad(true);
    if (auto* fc = dynamic_cast<nn::Linear*>(&layer)) {
      const Tensor w = leaf(fc->weight()), b = leaf(fc->bias());  // in parameters() order
      a = linear(a, w, b);
      forward += fc->weight().size(1) + 1;
      backward += fc->weight().size(0);
      own.resize(leaves.size(), batch);
    } else if (auto* conv = dynamic_cast<nn::Conv2d*>(&layer)) {
      const nn::Conv2dOptions& o = conv->options();
      const Tensor w = leaf(conv->weight()), b = leaf(conv->bias());
      a = conv2d(a, w, b, o.stride_, o.padding_, o.dilation_);
      forward += o.in_ * o.kernel_.h * o.kernel_.w + 1;
      backward += o.out_ * o.kernel_.h * o.kernel_.w;
      own.resize(leaves.size(), batch * a.size(2) * a.size(3));
    } else if (dynamic_cast<nn::ReLU*>(&layer)) {
      a = a * positive(real);
    } else if (layer.str() == "MaxPool2d(kernel=(2, 2), stride=(2, 2), padding=(0, 0))") {
      // the element the run picks in each window: the one its backward routes to
      const Tensor picked =
          kernels::max_pool2d_backward(ones_like(out), real, kernels::Pool2dArgs{2, 2, 0}).to(kFloat64);
      a = avg_pool2d(a * picked, 2) * 4.0;
    } else if (dynamic_cast<nn::Flatten*>(&layer)) {
      a = layer.forward(a);
    } else {
      FAIL("step_magnitudes: no absolute-value form for " << layer.str());
    }
    real = out;
  }
  const int64_t classes = real.size(1);
  const Tensor logits = real.to(kFloat64), p = softmax(logits, 1), lp = abs(log_softmax(logits, 1));
  const Tensor onehot = kernels::one_hot(labels, classes, kFloat64, "step_magnitudes");
  const Tensor moved = a.detach() + sum(p * a.detach(), 1, true) + lp + 1.0;  // a: the logits' magnitudes
  {
    AutoGradMode chain_with_grad(true);
    sum(a * ((p * moved + onehot) / static_cast<double>(batch))).backward();
  }
  StepMagnitudes m;
  for (const Tensor& g : leaves) m.grads.push_back(g.grad());
  // softmax's row and its 9 roundings (tests/kernels/test_softmax.cpp), the backward's exp,
  // subtraction and 1/N, the micro-batch's weight and the loss's mean
  const int64_t head = classes + 9 + 3 + 2;
  for (int64_t sum_length : own) m.lengths.push_back(forward + head + backward + sum_length);
  m.loss = (sum(moved * onehot) / static_cast<double>(batch)).item<double>();
  m.loss_length = forward + head + batch;
  return m;
}

// One frozen step of `name` on `b` in `dtype` on `device` in `accum` micro-batches: its loss and
// gradients (on the CPU).
struct FrozenStep {
  double loss;
  std::vector<Tensor> grads;
};
FrozenStep frozen_step(const std::string& name, const Batch& b, int64_t accum, DType dtype, Device device) {
  manual_seed(1);
  auto model = models::make_model(name, Shape{1, 28, 28}, 10);
  model->to(dtype);
  model->to(device);
  train::TrainerOptions o;
  o.accum = accum;
  train::Trainer trainer(model, frozen_sgd(), o);
  const double loss = trainer.step(b.images.to(dtype).to(device), b.labels.to(device)).loss;
  return {loss, gradients(*model)};
}

// The whole batch's step (run 0) and the accumulated one (run 1).
struct TwoRuns {
  double losses[2];
  std::vector<Tensor> grads[2];
};
TwoRuns whole_and_accumulated(const std::string& name, const Batch& b, int64_t accum, DType dtype, Device device) {
  TwoRuns r;
  for (int run = 0; run < 2; ++run) {
    FrozenStep s = frozen_step(name, b, run == 0 ? 1 : accum, dtype, device);
    r.losses[run] = s.loss;
    r.grads[run] = std::move(s.grads);
  }
  return r;
}

// Accumulation only regroups the batch's sums and weights each micro-batch's mean loss by its
// share: the same step in exact arithmetic.
//   f64: each run is within gamma(length) of it times the step's magnitudes (step_magnitudes), the
//   two within twice that: below 1e-4 of the largest gradient here, so a wrong weight or a lost
//   micro-batch shows.
//   f32: that bound says nothing (the chain on absolute values is 10^3 to 10^6 times the gradient:
//   random-signed sums cancel, their roundings do not add up so). The check is relative to the
//   gradient's norm instead, with the longest chain of sums n stated: rounding errors of
//   random-signed sums grow like a random walk, ~sqrt(n) u of the result (Higham and Mary,
//   probabilistic rounding error analysis, 2019); n u times the tensor's largest |gradient| leaves
//   room. Not a bound: it holds the f32 step to rounding-sized differences, far below a bug's.
//   On a GPU (device), the whole batch's f64 step is also held to the CPU's by the f64 bound: two
//   runs of the same sums in other orders.
void expect_accumulation_exact(const std::string& name, const Batch& b, int64_t accum, Device device = kCPU) {
  INFO(name << " accum " << accum << " on " << device);
  manual_seed(1);
  const StepMagnitudes m = step_magnitudes(*models::make_model(name, Shape{1, 28, 28}, 10), b.images, b.labels);
  const TwoRuns exact = whole_and_accumulated(name, b, accum, kFloat64, device);
  CHECK(std::fabs(exact.losses[1] - exact.losses[0]) <= test::gamma(2 * m.loss_length, kFloat64) * m.loss);
  REQUIRE(m.grads.size() == exact.grads[0].size());
  for (size_t i = 0; i < m.grads.size(); ++i)
    test::expect_within(exact.grads[1][i], exact.grads[0][i], test::sum_error_bound(2 * m.lengths[i], kFloat64, m.grads[i]),
                        name + " f64 parameter " + std::to_string(i));
  if (device != kCPU) {
    const FrozenStep cpu = frozen_step(name, b, 1, kFloat64, kCPU);
    CHECK(std::fabs(exact.losses[0] - cpu.loss) <= test::gamma(2 * m.loss_length, kFloat64) * m.loss);
    for (size_t i = 0; i < m.grads.size(); ++i)
      test::expect_within(exact.grads[0][i], cpu.grads[i], test::sum_error_bound(2 * m.lengths[i], kFloat64, m.grads[i]),
                          name + " f64 parameter " + std::to_string(i) + " against the CPU's");
  }

  const TwoRuns f32 = whole_and_accumulated(name, b, accum, kFloat32, device);
  CHECK(std::fabs(f32.losses[1] - f32.losses[0]) <= test::gamma(2 * m.loss_length, kFloat32) * f32.losses[0]);
  for (size_t i = 0; i < m.grads.size(); ++i) {
    const double norm = max(abs(f32.grads[0][i])).item<double>();
    const Tensor bound = full(f32.grads[0][i].shape(), test::gamma(2 * m.lengths[i], kFloat32) * norm, kFloat64);
    test::expect_within(f32.grads[1][i], f32.grads[0][i], bound, name + " f32 parameter " + std::to_string(i));
  }
}

}  // namespace

TEST_CASE("Trainer: --accum 4 gives the full batch's gradients (no BatchNorm)", "[trainer]") {
  const Batch b = make_batch(32, 7);
  for (const std::string name : {"mlp", "lenet5"}) expect_accumulation_exact(name, b, 4);
}

EMBER_CUDA_TEST_CASE("Trainer: --accum 4 on cuda gives the full batch's gradients, and the CPU's", "[trainer]") {
  const Batch b = make_batch(32, 7);
  for (const std::string name : {"mlp", "lenet5"}) expect_accumulation_exact(name, b, 4, kCUDA);
}

TEST_CASE("Trainer: an uneven last batch is split with weights, still the batch mean", "[trainer]") {
  const Batch b = make_batch(10, 3);  // 4 micro-batches of 3, 3, 2, 2
  expect_accumulation_exact("mlp", b, 4);
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

namespace {

// f16 roundings on the forward path through `model` in an fp16 step, with room: the images, each
// weight, and each module's output (3 for a container: a block's ReLUs and add).
int64_t forward_f16_roundings(nn::Module& model) {
  int64_t roundings = 1 + static_cast<int64_t>(model.parameters().size());
  for (const auto& [name, module] : model.named_modules())
    roundings += module->named_children().empty() ? 1 : 3;
  return roundings;
}

// The gradients of `name`'s fp16 step as the trainer takes them (train/trainer.cpp): the f16
// model's cross-entropy loss scaled by `scale`, backward, each f16 gradient unscaled in f32 (by
// a power of 2: exact), on the CPU.
std::vector<Tensor> fp16_gradients(const std::string& name, const Batch& b, double scale, Device device) {
  manual_seed(3);
  auto model = models::make_model(name, Shape{1, 28, 28}, 10);
  model->to(device);
  model->parameters_to(kFloat16);
  mul(cross_entropy(model->forward(b.images.to(device).to(kFloat16)), b.labels.to(device)), scale).backward();
  std::vector<Tensor> grads;
  for (const Tensor& p : model->parameters()) grads.push_back(mul(p.grad().to(kFloat32), 1.0 / scale).to(kCPU));
  return grads;
}

void expect_fp16_close_to_fp32(Device device) {
  // One SGD step (lr 0.05, momentum 0.9: the first step is p -= lr g) from the same weights in
  // fp32 and in fp16, checked in two parts.
  //   The step: the masters take the fp32 optimizer's step from the f16-rounded weights with the
  //   f16 gradients unscaled (recomputed outside the trainer: the same kernels, the same bits), up
  //   to the step's own f32 roundings; the f16 weights are the masters rounded, exactly.
  //   The loss, against fp32: fp16 rounds the images, the weights and every module's output to
  //   f16 (R of them on the forward path, forward_f16_roundings) and sums in f32 as fp32 does. A
  //   rigorous bound says nothing here (see expect_accumulation_exact); the check is relative to
  //   the logits' size, with R stated: each rounding changes a random-signed sum's terms by u16
  //   and the sum by ~u16 of itself, so the logits move by R u16 of their largest at most (the
  //   f32 sums' share, ~sqrt(n) u32 for n < 10^6, stays in that room) and the loss by twice that.
  //   The gradients themselves are not compared: a ReLU or a max whose inputs f16 brings within
  //   rounding of each other decides the other way and moves a whole term (10 to 20% of the step
  //   in ResNet-20's early layers here), which no rounding bound covers.
  const Batch b = make_batch(8, 6);
  const Tensor images = b.images.to(device), labels = b.labels.to(device);
  for (const std::string& name : models::model_names()) {
    INFO(name << " on " << device);
    std::shared_ptr<nn::Module> models[2];
    std::vector<Tensor> before, masters;  // the initial weights, the fp16 run's masters after its step
    double losses[2], scale = 0;
    for (int run = 0; run < 2; ++run) {
      manual_seed(3);
      models[run] = models::make_model(name, Shape{1, 28, 28}, 10);
      models[run]->to(device);
      if (run == 0)
        for (const Tensor& p : models[run]->parameters()) before.push_back(p.detach().to(kCPU).clone());
      train::TrainerOptions o;
      o.precision = run == 0 ? train::Precision::fp32 : train::Precision::fp16;
      train::Trainer trainer(models[run], sgd(0.05), o);
      const train::StepResult r = trainer.step(images, labels);
      CHECK(r.stepped);
      losses[run] = r.loss;
      if (run == 1) {
        for (const Tensor& m : trainer.optimizer().parameters()) masters.push_back(m.to(kCPU));
        scale = r.loss_scale;
      }
    }
    double largest_logit = 0;
    {
      NoGradGuard no_grad;
      largest_logit = max(abs(models[0]->forward(images))).item<double>();
    }
    CHECK(std::fabs(losses[1] - losses[0]) <=
          2 * test::gamma(forward_f16_roundings(*models[1]), kFloat16) * largest_logit);

    const std::vector<Tensor> grads = fp16_gradients(name, b, scale, device);
    std::vector<Tensor> p16;
    for (const Tensor& p : models[1]->parameters()) p16.push_back(p.to(kCPU));
    REQUIRE(masters.size() == p16.size());
    REQUIRE(grads.size() == p16.size());
    for (size_t i = 0; i < p16.size(); ++i) {
      const std::string what = name + " parameter " + std::to_string(i);
      REQUIRE(p16[i].dtype() == kFloat16);
      expect_close(p16[i], masters[i].to(kFloat16), 0, what + ": the f16 copy of its master");
      const Tensor start = before[i].to(kFloat16).to(kFloat64), step = 0.05 * grads[i].to(kFloat64);
      test::expect_within(masters[i], start - step,
                          test::ErrorModel{0, test::kSgdStepRoundings, 0}.bound(kFloat32, abs(start) + abs(step)),
                          what + ": the master after one SGD step");
    }
  }
}

}  // namespace

TEST_CASE("Trainer: fp16 trains every zoo model close to fp32", "[trainer]") { expect_fp16_close_to_fp32(kCPU); }
EMBER_CUDA_TEST_CASE("Trainer: fp16 trains every zoo model close to fp32 on cuda", "[trainer]") {
  expect_fp16_close_to_fp32(kCUDA);
}

namespace {

// Exact: a checkpointed segment recomputes its forward with the same kernels on the same values
// (and the same generator state), so every sum runs in the same order: the same bits.
void expect_checkpointing_exact(Device device) {
  const Batch b = make_batch(8, 5);
  std::vector<Tensor> grads[2];
  double losses[2];
  for (int run = 0; run < 2; ++run) {
    manual_seed(1);
    auto model = models::make_model("convnet", Shape{1, 28, 28}, 10);
    model->to(device);
    train::TrainerOptions o;
    o.checkpoint = run == 0 ? train::CheckpointPolicy::none() : train::CheckpointPolicy::sqrt();
    train::Trainer trainer(model, frozen_sgd(), o);
    const int64_t layers = static_cast<int64_t>(static_cast<nn::Sequential&>(*model).size());
    const auto sqrt_segments = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(layers))));
    CHECK(trainer.checkpoint_segments() == (run == 0 ? 0 : sqrt_segments));
    losses[run] = trainer.step(b.images.to(device), b.labels.to(device)).loss;
    grads[run] = gradients(*model);
  }
  CHECK(losses[1] == losses[0]);
  for (size_t i = 0; i < grads[0].size(); ++i) expect_close(grads[1][i], grads[0][i], 0.0, "checkpointed");
}

}  // namespace

TEST_CASE("Trainer: checkpointing gives the same step as without", "[trainer]") { expect_checkpointing_exact(kCPU); }
EMBER_CUDA_TEST_CASE("Trainer: checkpointing gives the same step as without on cuda", "[trainer]") {
  expect_checkpointing_exact(kCUDA);
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
