// dist/nccl_process_group.h. These cases need GPUs and are skipped without them (tests/dist/main.cpp);
// they are verified only where GPUs are lent: the first on any one GPU (an NCCL group of one rank
// runs every call), the second under `mpiexec -n 2` on a machine with two GPUs or more
// (docs/distributed.md).
#include <catch2/catch.hpp>

#include "core/cuda_runtime.h"
#include "dist/nccl_process_group.h"
#include "dist/single_process_group.h"
#include "kernels/ops.h"
#include "memory/empty.h"
#include "tests/dist/dist_test_support.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;
using namespace ember::dist;
using namespace ember::dist::test;
using Catch::Matchers::Contains;

namespace {
Tensor on(const Device& device, const std::vector<double>& values, DType dtype) {
  Tensor host = tensor_of(values, dtype);
  Tensor t = empty(host.shape(), TensorOptions().dtype(dtype).device(device));
  kernels::copy_(t, host);
  return t;
}

std::vector<double> values_on_host(const Tensor& t) {
  Tensor host = empty(t.shape(), TensorOptions().dtype(t.dtype()));
  kernels::copy_(host, t);
  cuda::synchronize(t.device());
  return values_of(host);
}
}  // namespace

EMBER_CUDA_TEST_CASE("an NCCL group of one rank runs every collective on the current stream", "[dist][nccl]") {
  if (!built_with_nccl()) {
    WARN("built without NCCL: nothing to run");
    return;
  }
  SingleProcessGroup bootstrap;
  const Device gpu(DeviceType::cuda, 0);
  std::unique_ptr<ProcessGroup> group = make_nccl_process_group(bootstrap, gpu);
  CHECK(group->backend_name() == "nccl");
  for (DType dtype : {DType::f32, DType::f64, DType::i64, DType::f16}) {
    CAPTURE(dtype);
    Tensor t = on(gpu, {1, 2, 3, 4}, dtype);
    group->all_reduce(t, ReduceOp::sum);
    group->broadcast(t, 0);
    Tensor out = empty({4}, TensorOptions().dtype(dtype).device(gpu));
    group->reduce_scatter(t, out, ReduceOp::sum);
    Tensor gathered = empty({4}, TensorOptions().dtype(dtype).device(gpu));
    group->all_gather(out, gathered);
    group->all_reduce_async(gathered, ReduceOp::sum)->wait();
    CHECK(values_on_host(gathered) == std::vector<double>{1, 2, 3, 4});
  }
  Tensor f = on(gpu, {2, 4}, DType::f32);
  group->all_reduce(f, ReduceOp::average);
  CHECK(values_on_host(f) == std::vector<double>{2, 4});
  CHECK_THROWS_WITH(group->all_reduce(tensor_of({1}, DType::f32), ReduceOp::sum),
                    Contains("all_reduce: [1] is on cpu, and this rank's NCCL communicator is on cuda:0"));
}

EMBER_MULTI_GPU_TEST_CASE("the world's CUDA collectives run over NCCL, one GPU per rank", "[dist][nccl]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  if (n < 2) {
    WARN("one rank: run under mpiexec -n 2 for this case");
    return;
  }
  const Device gpu(DeviceType::cuda, group.local_rank());
  Tensor t = on(gpu, {(r + 1) * 1.0, (r + 1) * 2.0, 5.0}, DType::f32);
  group.all_reduce(t, ReduceOp::sum);
  const double tri = n * (n + 1) / 2.0;
  CHECK(values_on_host(t) == std::vector<double>{tri, tri * 2, 5.0 * n});
  Tensor avg = on(gpu, {(2 * r + 1) * 1.0}, DType::f64);
  group.all_reduce_async(avg, ReduceOp::average)->wait();
  CHECK(values_on_host(avg) == std::vector<double>{double(n)});
  Tensor b = on(gpu, {r * 10.0, r * 10.0 + 1}, DType::i64);
  group.broadcast(b, n - 1);
  CHECK(values_on_host(b) == std::vector<double>{(n - 1) * 10.0, (n - 1) * 10.0 + 1});
  std::vector<double> input;
  for (int j = 0; j < 2 * n; ++j) input.push_back((r + 1) * (j + 1.0));
  Tensor shard = empty({2}, TensorOptions().device(gpu));
  group.reduce_scatter(on(gpu, input, DType::f32), shard, ReduceOp::sum);
  CHECK(values_on_host(shard) == std::vector<double>{tri * (2 * r + 1), tri * (2 * r + 2)});
  Tensor all = empty({2 * n}, TensorOptions().device(gpu));
  group.all_gather(shard, all);
  std::vector<double> expected;
  for (int j = 0; j < 2 * n; ++j) expected.push_back(tri * (j + 1));
  CHECK(values_on_host(all) == expected);
}
