// A training step that runs out of memory at any allocation. One train::Trainer step (what
// `ember train` runs) of LeNet-5 or ConvNet is counted first: its N backend allocations. Then for
// every k in 1..N, memory runs out from the k-th on (memory/fault_injection.h): the step must
// throw OutOfMemoryError, and once it has unwound (and the gradients it made are dropped, as the
// next step's zero_grad would) the allocator holds exactly what it held before the step, by
// category, its statistics agree with each other and with the backend, every thread-local scope
// is back to its default, the model and the optimizer's state are untouched, and with the fault
// lifted the same step succeeds with the loss and weights of a step that never failed.
//
// Over the caching allocator the backend allocations are its segments: a few per step, each
// refusal going down the retry rungs. Over the direct allocator every tensor is one, so every
// allocation site of the step fails once; fp16, checkpointing and accumulation add their own.
//
// What it exposed, each fixed at its cause:
// - SGD made its momentum buffers one parameter at a time inside the update loop: an OOM there
//   left the earlier parameters updated (the retried step moved them twice). optim::SGD and
//   optim::Adam now make all their missing state before they touch any parameter (Adam could
//   also keep a first moment without its second: every later step then threw, exp_avg_sq
//   undefined).
// - BatchNorm updates its running statistics during forward, so an OOM later in the step left
//   them counting a batch the step never finished, and the retry counted it again. Trainer::step
//   now holds a train::BufferRollback that puts the model's buffers back unless the step went
//   through.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/recompute_state.h"
#include "core/generator.h"
#include "kernels/factories.h"
#include "memory/allocation_observer.h"
#include "memory/allocator_scope.h"
#include "memory/out_of_memory.h"
#include "memory/scopes.h"
#include "models/zoo.h"
#include "optim/sgd.h"
#include "tests/support/faulty_allocator.h"
#include "train/trainer.h"

using namespace ember;

namespace {

constexpr int64_t kBatch = 4;

// Which step of which model over which allocator.
struct Sweep {
  std::string model;
  bool caching = true;
  bool warm = false;  // the step measured is the second (the optimizer's state exists), else the first
  train::TrainerOptions options;
  std::string str() const {
    return model + (warm ? "'s second step" : "'s first step") +
           (caching ? " over the caching allocator" : " over the direct allocator") +
           (options.precision == train::Precision::fp16 ? ", fp16" : "") +
           (options.checkpoint.enabled() ? ", --checkpoint " + options.checkpoint.str() : "") +
           (options.accum > 1 ? ", --accum " + std::to_string(options.accum) : "");
  }
};

// A model, its trainer and a batch, and a fresh allocator over a fault-injecting host backend
// for everything the steps allocate (gradients, optimizer state, activations, temporaries): the
// model and the batch come from the process's allocator, so the steps really reserve memory.
// Members are destroyed in reverse order: the optimizer's state before its allocator.
struct FaultyRun {
  explicit FaultyRun(const Sweep& sweep)
      : faulty(sweep.caching), allocator(*faulty.allocator), faults(*faulty.faults) {
    manual_seed(11);
    images = randn({kBatch, 1, 28, 28});
    labels = from_vector<int64_t>({3, 1, 4, 1}, Shape{kBatch});
    model = models::make_model(sweep.model, Shape{1, 28, 28}, 10);
    trainer = std::make_unique<train::Trainer>(model, [](std::vector<Tensor> params) {
      return std::make_unique<optim::SGD>(std::move(params), optim::SgdOptions(0.05).momentum(0.9));
    }, sweep.options);
    // The step measured starts with no gradients (it would drop them first thing) and an empty
    // cache, so it reserves its memory.
    if (sweep.warm) step();
    drop_gradients();
    allocator.empty_cache();
  }
  void drop_gradients() {
    model->zero_grad();
    trainer->optimizer().zero_grad();  // fp16: the fp32 masters'
  }
  double step() {
    AllocatorScope scope(kCPU, allocator);
    return trainer->step(images, labels).loss;
  }

  test::FaultyAllocator faulty;
  DeviceAllocator& allocator;
  FaultInjectingBackend& faults;
  Tensor images, labels;
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<train::Trainer> trainer;
};

// The model's parameters and buffers, copied to host vectors (no allocation on the run's allocator).
std::vector<std::vector<float>> model_state(const nn::Module& model) {
  std::vector<std::vector<float>> state;
  for (const Tensor& p : model.parameters()) state.push_back(p.to_vector<float>());
  for (const Tensor& b : model.buffers()) state.push_back(b.to_vector<float>());
  return state;
}

// "" when equal, else which tensor and element differ first (a CHECK on the vectors would print them all).
std::string first_difference(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return "different tensor counts";
  for (size_t t = 0; t < a.size(); ++t) {
    if (a[t].size() != b[t].size()) return "tensor " + std::to_string(t) + " changed size";
    for (size_t i = 0; i < a[t].size(); ++i)
      if (a[t][i] != b[t][i])
        return "tensor " + std::to_string(t) + "[" + std::to_string(i) + "]: " + std::to_string(a[t][i]) +
               " vs " + std::to_string(b[t][i]);
  }
  return "";
}

void check_consistent(const MemoryStats& s, const FaultInjectingBackend& faults) {
  CHECK(s.allocated_bytes.current <= s.reserved_bytes.current);
  CHECK(s.requested_bytes.current <= s.allocated_bytes.current);
  CHECK(s.active_bytes.current == s.allocated_bytes.current);  // one stream: nothing waits for another
  CHECK(s.active_count.current == s.allocation_count.current);
  CHECK(s.reserved_bytes.current == static_cast<int64_t>(faults.live_bytes()));
  int64_t by_category = 0;
  for (const Stat& c : s.by_category) by_category += c.current;
  CHECK(by_category == s.allocated_bytes.current);
  CHECK(s.allocated_by_pool[0].current + s.allocated_by_pool[1].current == s.allocated_bytes.current);
  CHECK(s.reserved_by_pool[0].current + s.reserved_by_pool[1].current == s.reserved_bytes.current);
}

void check_same_holdings(const MemoryStats& after, const MemoryStats& before) {
  CHECK(after.allocated_bytes.current == before.allocated_bytes.current);
  CHECK(after.requested_bytes.current == before.requested_bytes.current);
  CHECK(after.allocation_count.current == before.allocation_count.current);
  for (int c = 0; c < kNumMemoryCategories; ++c) {
    INFO("category " << category_name(static_cast<MemoryCategory>(c)));
    CHECK(after.by_category[static_cast<size_t>(c)].current == before.by_category[static_cast<size_t>(c)].current);
  }
}

// The per-thread state a step sets through RAII scopes, all back to the defaults.
void check_scopes_restored(const AllocationObserver* observer) {
  CHECK(current_category() == MemoryCategory::temporary);
  CHECK(current_phase() == Phase::other);
  CHECK(std::strcmp(OpNameScope::current(), "") == 0);
  CHECK(GradMode::is_enabled());
  CHECK_FALSE(autograd::is_recomputing());
  CHECK(allocation_observer() == observer);
}

struct Reference {
  int64_t backend_allocations = 0;  // N
  double loss = 0.0;
  std::vector<std::vector<float>> before, after;  // model state around the step
};

Reference unfaulted_step(const Sweep& sweep) {
  FaultyRun run(sweep);
  Reference ref;
  ref.before = model_state(*run.model);
  const int64_t mallocs = run.faults.mallocs();
  ref.loss = run.step();
  ref.backend_allocations = run.faults.mallocs() - mallocs;
  ref.after = model_state(*run.model);
  return ref;
}

void fail_every_allocation(const Sweep& sweep) {
  const Reference ref = unfaulted_step(sweep);
  INFO(sweep.str() << ", batch " << kBatch);
  REQUIRE(ref.backend_allocations > 0);
  const AllocationObserver* observer = allocation_observer();
  for (int64_t k = 1; k <= ref.backend_allocations; ++k) {
    INFO(sweep.str() << ": memory runs out at backend allocation " << k << " of " << ref.backend_allocations);
    FaultyRun run(sweep);
    const MemoryStats before = run.allocator.stats();
    const size_t state_bytes = run.trainer->optimizer().state_bytes();
    check_consistent(before, run.faults);

    run.faults.fail_from(k);
    try {
      run.step();
      FAIL("the step succeeded");
    } catch (const OutOfMemoryError&) {
      // expected; anything else escapes and fails the test with its message
    }
    run.faults.lift();
    check_scopes_restored(observer);
    run.drop_gradients();
    run.allocator.empty_cache();
    const MemoryStats after = run.allocator.stats();
    check_same_holdings(after, before);
    check_consistent(after, run.faults);
    CHECK(after.reserved_bytes.current == before.reserved_bytes.current);
    CHECK(first_difference(model_state(*run.model), ref.before) == "");
    CHECK(run.trainer->optimizer().state_bytes() == state_bytes);

    CHECK(run.step() == ref.loss);
    CHECK(first_difference(model_state(*run.model), ref.after) == "");
    check_consistent(run.allocator.stats(), run.faults);
  }
}

// One OpenMP thread while it lives: N then does not depend on the machine (the Winograd
// convolution makes scratch per thread), and the hundreds of short steps do not wait on the
// spinning threads of a busy machine.
class OneThread {
 public:
  OneThread() { omp_set_num_threads(1); }
  ~OneThread() { omp_set_num_threads(previous_); }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int previous_ = omp_get_max_threads();
};

}  // namespace

// N when this was written, at batch 4 on one thread, in each sweep's order below. The sweeps
// are two test cases so that CTest can run them side by side (a few minutes each under ASan).
TEST_CASE("Trainer: memory running out at any backend allocation of a step leaves nothing behind",
          "[trainer][fault][memory]") {
  OneThread one_thread;
  // N: 1, 3, 1, 58, 123. (LeNet-5's second step fits in the segments its first left, so it
  // reserves nothing: N = 0.)
  const Sweep sweeps[] = {
      {"lenet5", /*caching=*/true, /*warm=*/false, {}},
      {"convnet", true, false, {}},
      {"convnet", true, /*warm=*/true, {}},
      // A second step's tensors are the first's but the optimizer state: the first covers them.
      {"lenet5", /*caching=*/false, false, {}},
      {"convnet", false, false, {}},
  };
  for (const Sweep& sweep : sweeps) fail_every_allocation(sweep);
}

TEST_CASE("Trainer: memory running out at any backend allocation of an fp16, checkpointed or accumulated step leaves "
          "nothing behind",
          "[trainer][fault][memory]") {
  OneThread one_thread;
  train::TrainerOptions fp16, checkpointed, accumulated;
  fp16.precision = train::Precision::fp16;
  checkpointed.checkpoint = train::CheckpointPolicy::sqrt();
  accumulated.accum = 2;
  // N: 116, 184, 106.
  const Sweep sweeps[] = {
      {"lenet5", /*caching=*/false, /*warm=*/false, fp16},
      {"convnet", false, false, checkpointed},
      {"lenet5", false, false, accumulated},
  };
  for (const Sweep& sweep : sweeps) fail_every_allocation(sweep);
}
