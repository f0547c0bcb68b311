// Streams (core/cuda_stream.h): ops, copies and allocations go to the calling thread's current
// stream; the data loader copies on its own; events order one stream after another; and the
// multi-GPU paths (a loader on cuda:1, synchronize() of every device) use the right device.
#include <vector>

#include "core/cuda_runtime.h"
#include "core/cuda_stream.h"
#include "data/data_loader.h"
#include "kernels/factories.h"
#include "memory/allocator_scope.h"
#include "memory/caching_allocator.h"
#include "memory/raw_backend.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

#ifdef EMBER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace ember;

TEST_CASE("streams of CPU devices are the default handle and their guards and events do nothing", "[streams]") {
  CHECK(cuda::current_stream(kCPU) == cuda::Stream());
  CHECK(cuda::current_stream(kCPU).is_default());
  {
    cuda::StreamGuard guard{cuda::Stream()};
    CHECK(cuda::current_stream(kCPU) == cuda::Stream());
  }
  cuda::Event event;
  event.record(cuda::current_stream(kCPU));
  CHECK_FALSE(event.recorded());
  CHECK(event.query());
  event.synchronize();
  const Tensor t = ones({4});
  cuda::record_stream(t, cuda::current_stream(kCPU));  // a CPU tensor: nothing to mark
  // Until a guard names another, a CUDA device's current stream is its default one (no GPU needed to ask).
  CHECK(cuda::current_stream(kCUDA).is_default());
  CHECK(cuda::current_stream(kCUDA).device() == kCUDA);
}

TEST_CASE("a CUDA stream without a GPU is refused with a clear error", "[streams]") {
  if (cuda::is_available()) return;  // the machine has a GPU: the cuda: cases below run instead
  test::expect_error_contains([] { cuda::Stream::create(kCUDA); }, {"cuda::Stream::create", "cuda:0"});
}

#ifdef EMBER_HAVE_CUDA

EMBER_CUDA_TEST_CASE("a StreamGuard makes its stream current, allocations are for it, and it restores", "[streams]") {
  const cuda::Stream side = cuda::Stream::create(kCUDA);
  CHECK_FALSE(side.is_default());
  CHECK(side.device() == kCUDA);
  {
    cuda::StreamGuard guard(side);
    CHECK(cuda::current_stream(kCUDA) == side);
    CHECK(cuda::current_stream_handle() == side.handle());
    const Tensor t = empty({1000}, TensorOptions(DType::f32).device(kCUDA));
    CHECK(t.storage()->buffer.stream() == side.handle());
    {
      cuda::StreamGuard inner(cuda::Stream::default_stream(kCUDA));
      CHECK(cuda::current_stream(kCUDA).is_default());
    }
    CHECK(cuda::current_stream(kCUDA) == side);
  }
  CHECK(cuda::current_stream(kCUDA).is_default());
  // The pool hands out kPoolSize streams in turn.
  std::vector<cuda::Stream> made;
  for (int i = 0; i < cuda::Stream::kPoolSize; ++i) made.push_back(cuda::Stream::create(kCUDA));
  CHECK(cuda::Stream::create(kCUDA) == made.front());
}

// A CUDA graph captured from a stream holds exactly the work queued on that stream. The graph is
// replayed on new inputs: a kernel that went to another stream during the capture (or ran at
// once) is not in the graph, so its output keeps the old inputs' values and the result is wrong;
// a synchronising call would have failed the capture itself.
EMBER_CUDA_TEST_CASE("ops under a StreamGuard are queued on that stream: a CUDA graph captures them all", "[streams]") {
  // Caching whatever EMBER_ALLOCATOR says: the capture must find its blocks cached by the warm-up
  // (cudaMalloc is not allowed while capturing). Declared first: it outlives every tensor below.
  CachingAllocator cache(make_cuda_backend(0));
  AllocatorScope scope(kCUDA, cache);
  manual_seed(3);
  Tensor a = randn({64, 48}).to(kCUDA), b = randn({48, 40}).to(kCUDA), c = randn({64, 40}).to(kCUDA);
  const cuda::Stream side = cuda::Stream::create(kCUDA);
  side.wait(cuda::current_stream(kCUDA));
  auto ops = [&] { return sum(add(relu(matmul(a, b)), mul(c, 2.0)), 1); };
  Tensor y;
  cudaGraph_t graph = nullptr;
  {
    cuda::StreamGuard guard(side);
    y = ops();  // warm-up: kernels loaded, blocks cached for `side`
    y = Tensor();
    REQUIRE(cudaStreamBeginCapture(static_cast<cudaStream_t>(side.handle()), cudaStreamCaptureModeThreadLocal) ==
            cudaSuccess);
    y = ops();
    const cudaError_t captured = cudaStreamEndCapture(static_cast<cudaStream_t>(side.handle()), &graph);
    INFO("cudaStreamEndCapture: " << cudaGetErrorString(captured));
    REQUIRE(captured == cudaSuccess);
  }
  size_t nodes = 0;
  REQUIRE(cudaGraphGetNodes(graph, nullptr, &nodes) == cudaSuccess);
  CHECK(nodes >= 5);  // matmul, relu, mul, add, sum: a kernel each at least
  // New inputs, written in place on the default stream, then the replay on `side`.
  const Tensor a2 = randn({64, 48}), b2 = randn({48, 40}), c2 = randn({64, 40});
  a.copy_(a2);
  b.copy_(b2);
  c.copy_(c2);
  side.wait(cuda::current_stream(kCUDA));
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, static_cast<cudaStream_t>(side.handle())) == cudaSuccess);
  side.synchronize();
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  const Tensor want = sum(add(relu(matmul(a2.to(DType::f64), b2.to(DType::f64))), mul(c2.to(DType::f64), 2.0)), 1);
  // 48-term dot products, then relu, 2c, the add and a 40-term row sum: sum |terms| from |inputs|.
  const Tensor magnitude = sum(add(matmul(abs(a2.to(DType::f64)), abs(b2.to(DType::f64))), mul(abs(c2.to(DType::f64)), 2.0)), 1);
  test::expect_within(y.to(kCPU), want, test::sum_error_bound(48 + 40 + 4, DType::f32, magnitude), "the replayed graph");
  y = Tensor();
}

EMBER_CUDA_TEST_CASE("an event orders a stream after another's work without the host waiting", "[streams]") {
  const cuda::Stream side = cuda::Stream::create(kCUDA);
  // Whole numbers: 3x + 1 is exact in f32 below 2^24, so any difference is a read before the write,
  // never rounding (a host compiler may fuse the expected value's multiply and add).
  const int64_t n = 1 << 20;
  const Tensor x = arange(0, static_cast<double>(n), 1, TensorOptions(DType::f32)).to(kCUDA);
  Tensor y;
  {
    cuda::StreamGuard guard(side);
    side.wait(cuda::Stream::default_stream(kCUDA));
    y = mul(x, 3.0);
    cuda::record_stream(y, cuda::Stream::default_stream(kCUDA));
  }
  cuda::Event done;
  done.record(side);
  CHECK(done.recorded());
  cuda::Stream::default_stream(kCUDA).wait(done);
  const Tensor z = add(y, 1.0);  // on the default stream, after `side`'s multiply
  done.synchronize();
  CHECK(done.query());
  const std::vector<float> zs = z.to(kCPU).to_vector<float>();
  int64_t wrong = 0, first_wrong = -1;
  for (int64_t i = 0; i < n; ++i)
    if (zs[static_cast<size_t>(i)] != static_cast<float>(3 * i + 1) && wrong++ == 0) first_wrong = i;
  if (first_wrong >= 0) UNSCOPED_INFO("first wrong at " << first_wrong << ": z " << zs[static_cast<size_t>(first_wrong)]);
  CHECK(wrong == 0);
}

EMBER_CUDA_TEST_CASE("a CUDA loader copies on a stream of its own and the consumer's stream waits for it", "[streams][data]") {
  const data::Dataset d = data::make_dataset("streams test", arange(0, 64 * 28 * 28, 1, TensorOptions(DType::f32)).reshape({64, 1, 28, 28}),
                                             arange(0, 64, 1, TensorOptions(DType::i64)), 64);
  data::DataLoaderOptions o = data::DataLoaderOptions().batch_size(16).shuffle(false).device(kCUDA);
  data::DataLoader loader(d, o);
  double expected = 0;
  for (float v : d.images.to_vector<float>()) expected += v;
  double total = 0;
  for (data::Batch& batch : loader) {
    CHECK(batch.images.storage()->buffer.stream() != cuda::current_stream(kCUDA).handle());
    total += sum(batch.images.to(DType::f64)).item<double>();  // kernels on the default stream, right after the copy
  }
  CHECK(total == expected);  // whole numbers below 2^53: exact in f64
}

EMBER_MULTI_GPU_TEST_CASE("a CUDA loader on cuda:1 delivers the CPU loader's batches", "[streams][data]") {
  const Device second(DeviceType::cuda, 1);
  const data::Dataset d =
      data::make_dataset("streams test", randn({40, 1, 6, 6}), arange(0, 40, 1, TensorOptions(DType::i64)), 40);
  data::DataLoader cpu(d, data::DataLoaderOptions().batch_size(8)), gpu(d, data::DataLoaderOptions().batch_size(8).device(second));
  cpu.start_epoch(0);
  gpu.start_epoch(0);
  data::Batch x, y;
  while (cpu.next(x)) {
    REQUIRE(gpu.next(y));
    CHECK(y.images.device() == second);
    CHECK(x.images.to_vector<float>() == y.images.to(kCPU).to_vector<float>());
    CHECK(x.labels.to_vector<int64_t>() == y.labels.to(kCPU).to_vector<int64_t>());
  }
  CHECK(cuda::current_device() == 0);
}

EMBER_MULTI_GPU_TEST_CASE("synchronize() waits for every GPU, not only the current one", "[streams]") {
  const Device second(DeviceType::cuda, 1);
  const Tensor a = randn({2048, 2048}).to(second);
  cuda::Event done;
  const Tensor p = matmul(matmul(a, a), a);  // queued on cuda:1 while cuda:0 is current
  done.record(cuda::current_stream(second));
  CHECK(cuda::current_device() == 0);
  cuda::synchronize();
  CHECK(done.query());
  CHECK(p.device() == second);
}

#endif  // EMBER_HAVE_CUDA
