// train::checkpoint and checkpoint_sequential: the same loss, gradients and BatchNorm
// running statistics as without (bitwise: the recompute runs the same kernels on the same
// inputs, on the CPU and on a GPU), the PyTorch non-reentrant semantics, and the memory it saves.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "autograd/recompute_state.h"
#include "core/generator.h"
#include "kernels/factories.h"
#include "memory/allocation_observer.h"
#include "memory/memory.h"
#include "memory/scopes.h"
#include "models/activation.h"
#include "models/batch_norm.h"
#include "models/dropout.h"
#include "models/flatten.h"
#include "models/linear.h"
#include "models/pooling.h"
#include "models/resnet.h"
#include "models/sequential.h"
#include "models/zoo.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"
#include "train/checkpoint.h"
#include "train/checkpoint_sequential.h"

using namespace ember;
using test::expect_error_contains;

namespace {

void expect_bitwise(const Tensor& actual, const Tensor& expected, const std::string& what) {
  INFO(what << ": " << actual.str() << " vs " << expected.str());
  REQUIRE(actual.defined());
  REQUIRE(expected.defined());
  REQUIRE(actual.shape() == expected.shape());
  REQUIRE(actual.dtype() == expected.dtype());
  CHECK(std::memcmp(actual.data_ptr(), expected.data_ptr(), actual.nbytes()) == 0);
}

// The zoo's models plus a small net with BatchNorm1d and dropout between linear layers.
std::shared_ptr<nn::Sequential> make_net(const std::string& name) {
  if (name == "bn-dropout-net") {
    return std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
        models::conv_layer(1, 4, 3, 1, 1), std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Dropout>(0.3), std::make_shared<nn::MaxPool2d>(2), models::conv_layer(4, 8, 3, 1, 1),
        std::make_shared<nn::BatchNorm2d>(8), std::make_shared<nn::ReLU>(), std::make_shared<nn::Dropout>(0.5),
        std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(8 * 14 * 14, 10)});
  }
  auto model = std::dynamic_pointer_cast<nn::Sequential>(models::make_model(name, Shape{1, 28, 28}, 10));
  REQUIRE(model != nullptr);
  return model;
}

struct StepOutcome {
  Tensor loss;
  std::vector<Tensor> grads, buffers;
  GeneratorState rng_after;
};

// One forward and backward on `device`, the outcome on the CPU; bounds empty: no checkpointing.
StepOutcome run_step(const std::string& name, const std::vector<int64_t>& bounds, Device device = kCPU,
                     int64_t batch = 6) {
  manual_seed(11);
  const Tensor images = randn({batch, 1, 28, 28}).to(device);
  const Tensor labels = rand({batch}, {}, 0.0, 10.0).to(kInt64).to(device);
  manual_seed(3);
  auto net = make_net(name);
  net->to(device);
  const Tensor logits = bounds.empty() ? net->forward(images) : train::checkpoint_sequential(*net, bounds, images);
  StepOutcome out;
  const Tensor loss = cross_entropy(logits, labels);
  loss.backward();
  out.loss = loss.to(kCPU);
  for (const Tensor& p : net->parameters()) out.grads.push_back(p.grad().to(kCPU));
  for (const Tensor& b : net->buffers()) out.buffers.push_back(b.to(kCPU));
  out.rng_after = generator_state();
  return out;
}

void expect_same_step(const StepOutcome& a, const StepOutcome& b, const std::string& what) {
  expect_bitwise(a.loss, b.loss, what + " loss");
  REQUIRE(a.grads.size() == b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i) expect_bitwise(a.grads[i], b.grads[i], what + " grad " + std::to_string(i));
  REQUIRE(a.buffers.size() == b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i)
    expect_bitwise(a.buffers[i], b.buffers[i], what + " buffer " + std::to_string(i));
  CHECK(a.rng_after.offset == b.rng_after.offset);
}

// Records the category and phase of every allocation while alive.
class PhaseRecorder : public AllocationObserver {
 public:
  void on_event(const AllocationEvent& e) noexcept override {
    if (e.allocate && e.category == MemoryCategory::activation) ++activation_allocations[static_cast<int>(current_phase())];
  }
  int activation_allocations[kNumPhases] = {};

 private:
  ObserverInstall install_{this};  // last: installed once the rest is built
};

}  // namespace

namespace {

void expect_zoo_checkpointing_bitwise(Device device) {
  for (const std::string name : {"mlp", "lenet5", "convnet", "resnet20", "bn-dropout-net"}) {
    const StepOutcome plain = run_step(name, {}, device);
    const auto layers = static_cast<int64_t>(make_net(name)->size());
    for (int64_t segments : {int64_t{2}, static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(layers)))), layers}) {
      INFO(name << " with " << segments << " segments of " << layers << " layers on " << device);
      expect_same_step(run_step(name, train::equal_segment_bounds(layers, segments), device), plain,
                       name + " / " + std::to_string(segments));
    }
    manual_seed(11);
    const Tensor sample = randn({4, 1, 28, 28});
    const std::vector<int64_t> balanced = train::balanced_segment_bounds(*make_net(name), 3, sample);
    expect_same_step(run_step(name, balanced, device), plain, name + " balanced");
  }
}

}  // namespace

TEST_CASE("checkpoint_sequential: every zoo model's step is bitwise the same as without", "[checkpoint]") {
  expect_zoo_checkpointing_bitwise(kCPU);
}
EMBER_CUDA_TEST_CASE("checkpoint_sequential: every zoo model's step is bitwise the same as without on cuda",
                     "[checkpoint]") {
  expect_zoo_checkpointing_bitwise(kCUDA);
}

TEST_CASE("checkpoint: dropout draws the same mask in the recompute, and the generator ends where it would",
          "[checkpoint]") {
  manual_seed(5);
  const Tensor x = randn({4, 50}).requires_grad_();
  auto fn = [](const Tensor& in) { return dropout(relu(in), 0.5, true); };
  Tensor g[2];
  GeneratorState after[2];
  for (int run = 0; run < 2; ++run) {
    manual_seed(9);
    x.set_grad(Tensor());
    const Tensor y = run == 0 ? fn(x) : train::checkpoint(fn, x);
    sum(mul(y, y)).backward();
    g[run] = x.grad();
    after[run] = generator_state();
  }
  expect_bitwise(g[1], g[0], "dropout input gradient");
  CHECK(after[1].offset == after[0].offset);
}

TEST_CASE("checkpoint: BatchNorm updates its running statistics once", "[checkpoint]") {
  manual_seed(2);
  auto bn = std::make_shared<nn::BatchNorm2d>(8);
  const Tensor x = randn({4, 8, 3, 3}).requires_grad_();
  const Tensor before = bn->buffers()[0].clone();
  sum(train::checkpoint([&](const Tensor& in) { return bn->forward(in); }, x)).backward();
  const Tensor once = bn->buffers()[0].clone();
  CHECK_FALSE(std::memcmp(once.data_ptr(), before.data_ptr(), once.nbytes()) == 0);

  auto reference = std::make_shared<nn::BatchNorm2d>(8);
  reference->forward(x.detach());
  expect_bitwise(once, reference->buffers()[0], "running mean after one checkpointed step");
  CHECK_FALSE(autograd::is_recomputing());
}

TEST_CASE("checkpoint: inputs without grad, several inputs, an output used twice, nesting, retain_graph",
          "[checkpoint]") {
  manual_seed(4);
  auto fc = std::make_shared<nn::Linear>(6, 6);
  const Tensor x = randn({3, 6});  // no grad: fc's parameters still get theirs

  SECTION("an input that does not require grad") {
    const Tensor y = train::checkpoint([&](const Tensor& in) { return fc->forward(in); }, x);
    CHECK(y.requires_grad());
    sum(y).backward();
    const Tensor ckpt = fc->parameters()[0].grad().clone();
    fc->zero_grad();
    sum(fc->forward(x)).backward();
    expect_bitwise(ckpt, fc->parameters()[0].grad(), "weight gradient");
    CHECK_FALSE(x.grad().defined());
  }
  SECTION("two inputs, one without grad; the output used twice") {
    const Tensor a = randn({3, 6}).requires_grad_();
    const train::CheckpointFn fn = [&](const std::vector<Tensor>& in) { return mul(fc->forward(in[0]), in[1]); };
    Tensor grads[2];
    for (int run = 0; run < 2; ++run) {
      a.set_grad(Tensor());
      fc->zero_grad();
      const Tensor y = run == 0 ? fn({a, x}) : train::checkpoint(fn, {a, x});
      sum(add(mul(y, y), y)).backward();
      grads[run] = a.grad();
    }
    expect_bitwise(grads[1], grads[0], "input gradient");
  }
  SECTION("nested checkpoints") {
    const Tensor a = randn({3, 6}).requires_grad_();
    auto inner = [&](const Tensor& in) { return relu(fc->forward(in)); };
    auto outer = [&](const Tensor& in) { return fc->forward(train::checkpoint(inner, in)); };
    Tensor grads[2], weight_grads[2];
    for (int run = 0; run < 2; ++run) {
      a.set_grad(Tensor());
      fc->zero_grad();
      sum(run == 0 ? fc->forward(inner(a)) : train::checkpoint(outer, a)).backward();
      grads[run] = a.grad();
      weight_grads[run] = fc->parameters()[0].grad();
    }
    expect_bitwise(grads[1], grads[0], "input gradient");
    expect_bitwise(weight_grads[1], weight_grads[0], "weight gradient");
  }
  SECTION("backward twice with retain_graph recomputes twice") {
    const Tensor a = randn({3, 6}).requires_grad_();
    const Tensor loss = sum(train::checkpoint([&](const Tensor& in) { return relu(fc->forward(in)); }, a));
    loss.backward(Tensor(), /*retain_graph=*/true);
    const Tensor once = a.grad().clone();
    loss.backward();
    expect_bitwise(a.grad(), mul(once, 2.0), "twice the gradient");
  }
  SECTION("without grad mode it is just the function") {
    NoGradGuard no_grad;
    const Tensor y = train::checkpoint([&](const Tensor& in) { return fc->forward(in); }, x);
    CHECK_FALSE(y.requires_grad());
  }
}

TEST_CASE("checkpoint_sequential: bad segment counts and bounds name the value", "[checkpoint]") {
  auto net = make_net("lenet5");
  const Tensor x = zeros({2, 1, 28, 28});
  expect_error_contains([&] { train::checkpoint_sequential(*net, 0, x); }, {"segments", "between 1 and the 12 layers", "got 0"});
  expect_error_contains([&] { train::checkpoint_sequential(*net, 13, x); }, {"got 13"});
  expect_error_contains([&] { train::checkpoint_sequential(*net, std::vector<int64_t>{0, 5, 5}, x); },
                        {"{0, 5, 5}", "increase strictly"});
  expect_error_contains([&] { train::checkpoint_sequential(*net, std::vector<int64_t>{1, 5}, x); }, {"begin with 0"});
}

TEST_CASE("checkpoint_sequential: activations are recomputed in backward and the peak drops", "[checkpoint][memory]") {
  struct Outcome {
    int64_t activation_peak = 0;
    int forward_allocations = 0, backward_allocations = 0;
  };
  auto run = [](const std::vector<int64_t>& bounds) {
    manual_seed(1);
    const Tensor images = randn({32, 1, 28, 28});
    const Tensor labels = zeros({32}, TensorOptions().dtype(kInt64));
    auto net = make_net("convnet");
    const auto activation = static_cast<size_t>(MemoryCategory::activation);
    reset_peak_stats(kCPU);
    const int64_t base = memory_stats(kCPU).by_category[activation].current;
    PhaseRecorder phases;
    Tensor logits;
    {
      PhaseScope forward(Phase::forward);
      logits = bounds.empty() ? net->forward(images) : train::checkpoint_sequential(*net, bounds, images);
    }
    cross_entropy(logits, labels).backward();
    Outcome out;
    out.activation_peak = memory_stats(kCPU).by_category[activation].peak - base;
    out.forward_allocations = phases.activation_allocations[static_cast<int>(Phase::forward)];
    out.backward_allocations = phases.activation_allocations[static_cast<int>(Phase::backward)];
    return out;
  };
  const Outcome plain = run({});
  const auto layers = static_cast<int64_t>(make_net("convnet")->size());
  const Outcome equal = run(train::equal_segment_bounds(layers, 5));
  manual_seed(1);
  const std::vector<int64_t> bounds = train::balanced_segment_bounds(*make_net("convnet"), 5, randn({2, 1, 28, 28}));
  const Outcome ckpt = run(bounds);
  INFO("activation peak " << plain.activation_peak << " B without, " << equal.activation_peak
                          << " B with 5 equal segments, " << ckpt.activation_peak << " B with 5 balanced ones");
  CHECK(equal.activation_peak < plain.activation_peak);
  // ConvNet's first two blocks are each one whole-resolution segment either way (1.8x).
  CHECK(ckpt.activation_peak <= equal.activation_peak);
  CHECK(ckpt.activation_peak * 17 < plain.activation_peak * 10);
  CHECK(plain.backward_allocations == 0);
  CHECK(ckpt.backward_allocations > 0);  // the recompute, counted as activation in the backward phase
  CHECK(ckpt.forward_allocations > 0);
}
