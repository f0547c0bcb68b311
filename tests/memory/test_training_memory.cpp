// The caching allocator in real training: steady state after the first steps,
// and an out-of-memory that names its causes and leaves the process able to go on.
#include <string>

#include "memory/memory.h"
#include "models/zoo.h"
#include "optim/sgd.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;

namespace {

std::shared_ptr<nn::Module> make_model_on(const std::string& name, Device device) {
  auto model = models::make_model(name, Shape{1, 28, 28}, 10);
  model->to(device);
  return model;
}

struct Trainer {
  explicit Trainer(const std::string& model_name, Device device = kCPU)
      : model(make_model_on(model_name, device)), sgd(model->parameters(), optim::SgdOptions(0.05).momentum(0.9)),
        device(device) {}
  void step(int64_t batch) {
    Tensor images = randn({batch, 1, 28, 28}).to(device);
    Tensor labels = from_vector<int64_t>(std::vector<int64_t>(static_cast<size_t>(batch), 7), Shape{batch}).to(device);
    sgd.zero_grad();
    cross_entropy(model->forward(images), labels).backward();
    sgd.step();
  }
  std::shared_ptr<nn::Module> model;
  optim::SGD sgd;
  Device device;
};

void expect_steady_after_two_steps(Device device) {
  if (allocator_for(device).name().rfind("caching", 0) != 0) return;  // EMBER_ALLOCATOR=direct: nothing cached
  for (const char* name : {"lenet5", "convnet"}) {
    INFO(name << " on " << device);
    Trainer trainer(name, device);
    trainer.step(32);
    trainer.step(32);
    const int64_t after_two = memory_stats(device).backend_allocations;
    for (int i = 0; i < 3; ++i) trainer.step(32);
    CHECK(memory_stats(device).backend_allocations == after_two);
    CHECK(memory_stats(device).cache_hits > 0);
  }
}

}  // namespace

TEST_CASE("after two steps training makes no new backend allocations", "[memory][steady]") {
  expect_steady_after_two_steps(kCPU);
}
EMBER_CUDA_TEST_CASE("after two steps training on cuda makes no new backend allocations", "[memory][steady]") {
  expect_steady_after_two_steps(kCUDA);
}

TEST_CASE("ConvNet at batch 512 under a 64 MiB budget: a clear OOM, then batch 32 trains", "[memory][oom]") {
  empty_cache(kCPU);
  reset_peak_stats(kCPU);
  const MemoryStats before = memory_stats(kCPU);
  constexpr size_t kBudgetBytes = 64u << 20;
  set_cpu_memory_limit(static_cast<size_t>(before.reserved_bytes.current) + kBudgetBytes);
  struct Unlimit {
    ~Unlimit() { set_cpu_memory_limit(0); }
  } unlimit;

  Trainer trainer("convnet");
  const int64_t with_model = memory_stats(kCPU).allocated_bytes.current;
  std::string message;
  try {
    trainer.step(512);
  } catch (const OutOfMemoryError& e) {
    message = e.what();
  }
  INFO(message);
  REQUIRE(!message.empty());
  for (const char* field : {"tried to allocate", "capacity", "allocated", "reserved but unused", "largest free block",
                            "checkpointing", "accumulation", "fp16"})
    CHECK(message.find(field) != std::string::npos);
  CHECK(memory_stats(kCPU).ooms >= 1);
  // Everything the failed step allocated is back: nothing leaked.
  trainer.sgd.zero_grad();
  CHECK(memory_stats(kCPU).allocated_bytes.current == with_model);
  // The same process trains at a batch that fits.
  trainer.step(32);
  trainer.step(32);
  trainer.sgd.zero_grad();
  CHECK(memory_stats(kCPU).allocated_bytes.peak - before.allocated_bytes.current <= static_cast<int64_t>(kBudgetBytes));
}
