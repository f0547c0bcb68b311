// dist/process_group.h on dist::world(): every collective, in every dtype it takes, on uneven sizes,
// run by every rank of the job (one process, or mpiexec -n 2 and -n 3).
#include <catch2/catch.hpp>

#include "dist/nccl_process_group.h"
#include "dist/process_group.h"
#include "dist/world.h"
#include "memory/empty.h"
#include "memory/simulation.h"
#include "tests/dist/dist_test_support.h"

using namespace ember;
using namespace ember::dist;
using namespace ember::dist::test;
using Catch::Matchers::Contains;

namespace {
// 1 + 2 + ... + n: the sum over the ranks of (rank + 1).
double triangle(int n) { return n * (n + 1) / 2.0; }
}  // namespace

TEST_CASE("world: the launcher's ranks", "[dist]") {
  ProcessGroup& group = world();
  CHECK(is_initialized());
  CHECK(&init_process_group() == &group);
  CHECK(group.size() >= 1);
  CHECK(group.rank() >= 0);
  CHECK(group.rank() < group.size());
  CHECK(group.local_rank() == group.rank());  // every rank of these runs is on this machine
  const std::string backend = group.size() == 1 ? "single" : built_with_nccl() ? "mpi+nccl" : "mpi";
  CHECK(group.backend_name() == backend);
}

TEST_CASE("all_reduce: the sum over the ranks, in place, in f32, f64 and i64", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  for (DType dtype : kReducible) {
    CAPTURE(dtype);
    std::vector<double> mine, expected;
    for (int i = 0; i < 7; ++i) {  // 7: not a multiple of any rank count or vector width
      mine.push_back((r + 1) * (i + 1.0));
      expected.push_back(triangle(n) * (i + 1.0));
    }
    Tensor t = tensor_of(mine, dtype);
    const uint64_t version = t.version();
    group.all_reduce(t, ReduceOp::sum);
    CHECK(values_of(t) == expected);
    CHECK(t.version() > version);
  }
}

TEST_CASE("all_reduce: i64 sums use all 64 bits", "[dist]") {
  ProcessGroup& group = world();
  const int64_t big = int64_t{1} << 52;  // sums above 2^53: not exact in f64, so this is integer addition
  Tensor t = empty({2}, TensorOptions().dtype(DType::i64));
  t.data<int64_t>()[0] = big * 3 + group.rank();
  t.data<int64_t>()[1] = -big * 3;
  group.all_reduce(t, ReduceOp::sum);
  const int64_t n = group.size();
  CHECK(t.data<int64_t>()[0] == big * 3 * n + n * (n - 1) / 2);
  CHECK(t.data<int64_t>()[1] == -big * 3 * n);
}

TEST_CASE("all_reduce: the average in f32 and f64", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  for (DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(dtype);
    // (2r + 1)(i + 1) sums to n^2 (i + 1) over the ranks: its average n (i + 1) is exact; r alone
    // averages to (n - 1) / 2, exact for 2 and 3 ranks.
    std::vector<double> mine, expected;
    for (int i = 0; i < 5; ++i) {
      mine.push_back((2 * r + 1) * (i + 1.0));
      expected.push_back(n * (i + 1.0));
    }
    mine.push_back(r);
    expected.push_back((n - 1) / 2.0);
    Tensor t = tensor_of(mine, dtype);
    group.all_reduce(t, ReduceOp::average);
    CHECK(values_of(t) == expected);
  }
}

TEST_CASE("all_reduce: an empty tensor and a single element", "[dist]") {
  ProcessGroup& group = world();
  Tensor nothing = empty({0});
  group.all_reduce(nothing, ReduceOp::sum);
  CHECK(nothing.numel() == 0);
  Tensor one = tensor_of({1.0}, DType::f32);
  group.all_reduce(one, ReduceOp::sum);
  CHECK(values_of(one) == std::vector<double>{double(group.size())});
}

TEST_CASE("broadcast: every rank gets the root's values, from every root, in every dtype", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  for (DType dtype : {DType::f32, DType::f64, DType::i64, DType::f16, DType::u8}) {
    for (int root = 0; root < n; ++root) {
      CAPTURE(dtype, root);
      std::vector<double> mine, expected;
      for (int i = 0; i < 5; ++i) {
        mine.push_back(r * 10 + i);
        expected.push_back(root * 10 + i);
      }
      Tensor t = tensor_of(mine, dtype);
      group.broadcast(t, root);
      CHECK(values_of(t) == expected);
    }
  }
}

TEST_CASE("reduce_scatter: rank r gets the sum or average of the ranks' r-th chunks", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  const int64_t chunk = 3;
  for (DType dtype : kReducible) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::average}) {
      if (dtype == DType::i64 && op == ReduceOp::average) continue;
      CAPTURE(dtype, reduce_op_name(op));
      // Element j of rank q's input is (q + 1)(j + 1): element j sums to triangle(n)(j + 1).
      std::vector<double> input;
      for (int64_t j = 0; j < n * chunk; ++j) input.push_back((r + 1) * (j + 1.0));
      // The average: the exact sum's quotient, rounded once to the dtype (a division, as the backend's).
      std::vector<double> expected;
      for (int64_t i = 0; i < chunk; ++i) {
        const double sum = triangle(n) * (r * chunk + i + 1.0);
        if (op == ReduceOp::sum) expected.push_back(sum);
        else if (dtype == DType::f32) expected.push_back(static_cast<float>(sum) / static_cast<float>(n));
        else expected.push_back(sum / n);
      }
      Tensor output = empty({chunk}, TensorOptions().dtype(dtype));
      group.reduce_scatter(tensor_of(input, dtype), output, op);
      CHECK(values_of(output) == expected);
    }
  }
}

TEST_CASE("all_gather: the ranks' inputs in rank order, in every dtype", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  const int64_t chunk = 2;
  for (DType dtype : {DType::f32, DType::f64, DType::i64, DType::f16, DType::u8}) {
    CAPTURE(dtype);
    Tensor output = empty({n, chunk}, TensorOptions().dtype(dtype));  // any shape with n * chunk elements
    group.all_gather(tensor_of({r * 10.0, r * 10.0 + 1}, dtype), output);
    std::vector<double> expected;
    for (int q = 0; q < n; ++q) expected.insert(expected.end(), {q * 10.0, q * 10.0 + 1});
    CHECK(values_of(output) == expected);
  }
}

TEST_CASE("reduce_scatter then all_gather is all_reduce", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  const int64_t chunk = 5;
  std::vector<double> mine;
  for (int64_t j = 0; j < n * chunk; ++j) mine.push_back(static_cast<double>((j * 7 + r * 13) % 11) - 5);
  for (DType dtype : kReducible) {
    CAPTURE(dtype);
    Tensor reduced = tensor_of(mine, dtype);
    group.all_reduce(reduced, ReduceOp::sum);
    Tensor shard = empty({chunk}, TensorOptions().dtype(dtype));
    group.reduce_scatter(tensor_of(mine, dtype), shard, ReduceOp::sum);
    Tensor gathered = empty({n * chunk}, TensorOptions().dtype(dtype));
    group.all_gather(shard, gathered);
    CHECK(values_of(gathered) == values_of(reduced));
  }
}

TEST_CASE("reduce_scatter and all_gather in place: this rank's chunk of one flat buffer", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  const int64_t chunk = 4;
  std::vector<double> mine;
  for (int64_t j = 0; j < n * chunk; ++j) mine.push_back((r + 1) * (j + 1.0));
  Tensor flat = tensor_of(mine, DType::f32);
  Tensor my_chunk = chunk_of(flat, r, chunk);
  group.reduce_scatter(flat, my_chunk, ReduceOp::sum);  // ZeRO's gradient shard
  std::vector<double> expected;
  for (int64_t i = 0; i < chunk; ++i) expected.push_back(triangle(n) * (r * chunk + i + 1.0));
  CHECK(values_of(my_chunk) == expected);
  group.all_gather(my_chunk, flat);  // and the parameters back
  std::vector<double> all;
  for (int64_t j = 0; j < n * chunk; ++j) all.push_back(triangle(n) * (j + 1.0));
  CHECK(values_of(flat) == all);
}

TEST_CASE("all_reduce_async: several in flight, waited in any order, or by the destructor", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  std::vector<Tensor> tensors;
  std::vector<std::unique_ptr<Work>> works;
  for (int k = 0; k < 4; ++k) {
    tensors.push_back(tensor_of({(r + 1.0) * (k + 1), double(k), 1.0}, k % 2 == 0 ? DType::f32 : DType::f64));
    works.push_back(group.all_reduce_async(tensors.back(), k == 3 ? ReduceOp::average : ReduceOp::sum));
  }
  works[2]->wait();
  works[0]->wait();
  works[0]->wait();  // a second wait returns at once
  works[1].reset();  // destroyed without wait(): its destructor waits
  works[3]->wait();
  for (int k = 0; k < 3; ++k) CHECK(values_of(tensors[k]) == std::vector<double>{triangle(n) * (k + 1), k * 1.0 * n, 1.0 * n});
  CHECK(values_of(tensors[3]) == std::vector<double>{triangle(n) * 4 / n, 3.0, 1.0});
}

TEST_CASE("barrier: returns on every rank", "[dist]") {
  world().barrier();
  world().barrier();
  SUCCEED();
}

TEST_CASE("collectives refuse mismatched dtypes, devices and sizes, naming the op and the shapes", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size();
  Tensor f32 = empty({n * 2});
  Tensor f64 = empty({2}, TensorOptions().dtype(DType::f64));
  CHECK_THROWS_WITH(group.reduce_scatter(f32, f64, ReduceOp::sum),
                    Contains("reduce_scatter: input [" + std::to_string(n * 2) + "] is f32 but output [2] is f64"));
  CHECK_THROWS_WITH(group.all_gather(f64, f32),
                    Contains("all_gather: input [2] is f64 but output [" + std::to_string(n * 2) + "] is f32"));
  Tensor three = empty({3});
  CHECK_THROWS_WITH(group.reduce_scatter(f32, three, ReduceOp::sum),
                    Contains("reduce_scatter: input [" + std::to_string(n * 2) + "] has " + std::to_string(n * 2) +
                             " elements, but " + std::to_string(n) + " ranks need " + std::to_string(n) +
                             " chunks of output [3]"));
  Tensor too_big = empty({n * 3 + 1});
  CHECK_THROWS_WITH(group.all_gather(three, too_big),
                    Contains("all_gather: output [" + std::to_string(n * 3 + 1) + "] has " +
                             std::to_string(n * 3 + 1) + " elements, but " + std::to_string(n) + " ranks' inputs [3]"));
  CHECK_THROWS_WITH(group.broadcast(three, n), Contains("broadcast: root " + std::to_string(n) + " is not a rank"));
  CHECK_THROWS_WITH(group.broadcast(three, -1), Contains("broadcast: root -1 is not a rank"));
  CHECK_THROWS_WITH(group.all_reduce(Tensor(), ReduceOp::sum), Contains("all_reduce: the tensor is an undefined tensor"));
}

TEST_CASE("reductions refuse the dtypes they cannot add in, saying why", "[dist]") {
  ProcessGroup& group = world();
  Tensor i64 = empty({4}, TensorOptions().dtype(DType::i64));
  CHECK_THROWS_WITH(group.all_reduce(i64, ReduceOp::average), Contains("all_reduce: the average of an i64 [4] would truncate"));
  Tensor f16 = empty({4}, TensorOptions().dtype(DType::f16));
  CHECK_THROWS_WITH(group.all_reduce(f16, ReduceOp::sum), Contains("MPI has no half-precision type"));
  CHECK_THROWS_WITH(group.all_reduce_async(f16, ReduceOp::sum), Contains("all_reduce_async: f16 [4] on the CPU"));
  Tensor u8 = empty({4}, TensorOptions().dtype(DType::u8));
  CHECK_THROWS_WITH(group.all_reduce(u8, ReduceOp::sum), Contains("u8 [4] cannot be reduced"));
  Tensor f16_out = empty({4 * group.size()}, TensorOptions().dtype(DType::f16));
  CHECK_THROWS_WITH(group.reduce_scatter(f16_out, f16, ReduceOp::sum), Contains("reduce_scatter: f16"));
}

TEST_CASE("reduce_scatter and all_gather refuse overlapping tensors other than this rank's chunk", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  // One storage of 2n + 1 elements: `whole` is its first 2n, `skewed` elements [1, 3), which
  // overlaps `whole` and is no rank's chunk of it (those start at even elements).
  Tensor storage = empty({n * 2 + 1});
  Tensor whole = chunk_of(storage, 0, n * 2);
  Tensor skewed = Tensor(storage.storage(), storage.impl()->offset_bytes + sizeof(float), Shape{2}, DType::f32, kCPU);
  const std::string rank_chunk = "other than as rank " + std::to_string(r) + "'s chunk";
  CHECK_THROWS_WITH(group.reduce_scatter(whole, skewed, ReduceOp::sum),
                    Contains("reduce_scatter: output [2] overlaps input [" + std::to_string(n * 2) + "] " + rank_chunk));
  CHECK_THROWS_WITH(group.all_gather(skewed, whole),
                    Contains("all_gather: input [2] overlaps output [" + std::to_string(n * 2) + "] " + rank_chunk));
}

TEST_CASE("in a SimulationScope the collectives check and communicate nothing", "[dist]") {
  ProcessGroup& group = world();
  Tensor t = tensor_of({1.0, 2.0}, DType::f32);
  {
    SimulationScope simulation(kCPU);
    group.all_reduce(t, ReduceOp::sum);
    group.broadcast(t, 0);
    group.barrier();
    group.all_reduce_async(t, ReduceOp::sum)->wait();
    CHECK_THROWS_WITH(group.broadcast(t, group.size()), Contains("broadcast: root"));
  }
  CHECK(values_of(t) == std::vector<double>{1.0, 2.0});
}
