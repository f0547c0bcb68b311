// dist/single_process_group.h: rank 0 of 1, made directly (so it runs on every rank of every run).
#include <catch2/catch.hpp>

#include "dist/single_process_group.h"
#include "memory/empty.h"
#include "tests/dist/dist_test_support.h"

using namespace ember;
using namespace ember::dist;
using namespace ember::dist::test;
using Catch::Matchers::Contains;

TEST_CASE("SingleProcessGroup: rank 0 of 1, and every collective keeps or copies the values", "[dist]") {
  SingleProcessGroup group;
  CHECK(group.rank() == 0);
  CHECK(group.size() == 1);
  CHECK(group.local_rank() == 0);
  CHECK(group.backend_name() == "single");
  for (DType dtype : kReducible) {
    CAPTURE(dtype);
    const std::vector<double> values = {3, -1, 4, 1, 5};
    Tensor t = tensor_of(values, dtype);
    group.all_reduce(t, ReduceOp::sum);
    CHECK(values_of(t) == values);
    group.broadcast(t, 0);
    CHECK(values_of(t) == values);
    Tensor out = empty({5}, TensorOptions().dtype(dtype));
    group.reduce_scatter(t, out, ReduceOp::sum);
    CHECK(values_of(out) == values);
    Tensor gathered = empty({5}, TensorOptions().dtype(dtype));
    group.all_gather(t, gathered);
    CHECK(values_of(gathered) == values);
    group.all_reduce_async(t, ReduceOp::sum)->wait();
    CHECK(values_of(t) == values);
  }
  Tensor f = tensor_of({2, 4}, DType::f32);
  group.all_reduce(f, ReduceOp::average);
  CHECK(values_of(f) == std::vector<double>{2, 4});
  group.reduce_scatter(f, f, ReduceOp::average);  // in place: output is rank 0's chunk, all of it
  CHECK(values_of(f) == std::vector<double>{2, 4});
  group.barrier();
}

TEST_CASE("SingleProcessGroup: the same checks as a group of many", "[dist]") {
  SingleProcessGroup group;
  CHECK_THROWS_WITH(group.broadcast(empty({2}), 1), Contains("broadcast: root 1 is not a rank of this group of 1 (0 .. 0)"));
  CHECK_THROWS_WITH(group.all_reduce(empty({2}, TensorOptions().dtype(DType::f16)), ReduceOp::sum),
                    Contains("MPI has no half-precision type"));
  CHECK_THROWS_WITH(group.all_gather(empty({2}), empty({3})), Contains("all_gather: output [3] has 3 elements"));
}
