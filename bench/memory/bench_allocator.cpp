// Allocate+free latency of the caching allocator against the direct one, on the
// exact sequence of requests of one real training step (recorded from the model,
// then replayed against a fresh allocator over host memory). Each block's pages
// are touched once, as the op that asked would: the direct allocator's large
// blocks come back from the kernel as fresh pages and fault on every step.
//
//   bench_allocator                          # ConvNet, batch 64
//   EMBER_BENCH_MODEL=lenet5 bench_allocator
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/ops.h"
#include "kernels/factories.h"
#include "memory/caching_allocator.h"
#include "memory/direct_allocator.h"
#include "memory/recorder.h"
#include "models/zoo.h"
#include "optim/sgd.h"

namespace {

using namespace ember;

constexpr size_t kPageBytes = 4096;

// One event of the recorded step: allocate `bytes` as block `id`, or free block `id`.
struct Request {
  bool allocate;
  size_t id;
  size_t bytes;
};

std::vector<Request> record_training_step(const std::string& model_name, int64_t batch) {
  auto model = models::make_model(model_name, Shape{1, 28, 28}, 10);
  optim::SGD sgd(model->parameters(), optim::SgdOptions(0.05).momentum(0.9));
  Tensor images = randn({batch, 1, 28, 28});
  Tensor labels = from_vector<int64_t>(std::vector<int64_t>(static_cast<size_t>(batch), 3), Shape{batch});
  auto step = [&] {
    sgd.zero_grad();
    cross_entropy(model->forward(images), labels).backward();
    sgd.step();
  };
  step();  // momentum buffers and caches exist from here on, as in steady state
  MemoryRecorder recorder(kCPU);
  recorder.start();
  step();
  recorder.stop();
  std::vector<Request> requests;
  std::unordered_map<uintptr_t, size_t> live;
  size_t next_id = 0;
  for (const auto& s : recorder.samples()) {
    if (s.allocate) {
      live[s.address] = next_id;
      requests.push_back({true, next_id++, static_cast<size_t>(s.bytes)});
    } else if (auto it = live.find(s.address); it != live.end()) {
      requests.push_back({false, it->second, 0});
      live.erase(it);
    }
  }
  return requests;
}

const std::vector<Request>& step_requests() {
  static const std::vector<Request> requests = [] {
    const char* model = std::getenv("EMBER_BENCH_MODEL");
    return record_training_step(model ? model : "convnet", 64);
  }();
  return requests;
}

void replay(benchmark::State& state, DeviceAllocator& allocator) {
  const std::vector<Request>& requests = step_requests();
  std::vector<Buffer> blocks(requests.size());
  int64_t allocations = 0;
  for (auto _ : state) {
    for (const Request& r : requests) {
      if (r.allocate) {
        AllocationRequest a;
        a.bytes = r.bytes;
        blocks[r.id] = allocator.allocate(a);
        // Touch every page, as the op that asked would: fresh memory costs a page fault per page.
        auto* bytes = static_cast<volatile char*>(blocks[r.id].data());
        for (size_t offset = 0; offset < r.bytes; offset += kPageBytes) bytes[offset] = 1;
        ++allocations;
      } else {
        blocks[r.id] = Buffer();
      }
    }
    for (Buffer& b : blocks) b = Buffer();  // what the step kept (e.g. new grads) is freed before the next
  }
  state.counters["ns_per_alloc_free"] =
      benchmark::Counter(static_cast<double>(allocations), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["requests_per_step"] = static_cast<double>(allocations) / static_cast<double>(state.iterations());
  state.counters["backend_calls"] = static_cast<double>(allocator.stats().backend_allocations);
}

void BM_CachingAllocator(benchmark::State& state) {
  CachingAllocator allocator(make_host_backend(0));
  replay(state, allocator);
}

void BM_DirectAllocator(benchmark::State& state) {
  DirectAllocator allocator(make_host_backend(0));
  replay(state, allocator);
}

BENCHMARK(BM_CachingAllocator)->Repetitions(3)->ReportAggregatesOnly(true)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DirectAllocator)->Repetitions(3)->ReportAggregatesOnly(true)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
