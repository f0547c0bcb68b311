// plan_block_copy (kernels/block_copy.h): which dims a copy walks after size-1 dims are dropped
// and contiguous neighbours merged, and the offsets both backends compute from it.
#include "kernels/block_copy.h"
#include "tests/support/expect.h"

using namespace ember;
using kernels::BlockCopy;
using kernels::plan_block_copy;

TEST_CASE("plan_block_copy merges what is contiguous on both sides", "[block_copy]") {
  // A dense copy of [2, 3, 4] is one run of 24.
  BlockCopy dense = plan_block_copy({2, 3, 4}, {12, 4, 1}, 0, {12, 4, 1}, 0, "test");
  CHECK(dense.dims == 1);
  CHECK(dense.sizes[0] == 24);
  // x[:, 1:3] of x [4, 6]: rows of 2, 4 of them, source rows 6 apart.
  BlockCopy narrow = plan_block_copy({4, 2}, {6, 1}, 1, {2, 1}, 0, "test");
  CHECK(narrow.dims == 2);
  int64_t s = 0, d = 0;
  narrow.offsets(5, s, d);  // row 2, column 1
  CHECK(s == 1 + 2 * 6 + 1);
  CHECK(d == 5);
  // Size-1 dims cost nothing; a 1-element block walks no dim.
  CHECK(plan_block_copy({1, 1, 1}, {7, 7, 7}, 3, {1, 1, 1}, 0, "test").dims == 0);
  // An empty block copies nothing.
  CHECK(plan_block_copy({3, 0}, {1, 1}, 0, {1, 1}, 0, "test").numel == 0);
}

TEST_CASE("a permute of more than 8 dims runs when its dims merge", "[block_copy]") {
  // [2, 1, 2, 1, 2, 1, 2, 1, 2, 3] with its last two dims swapped: after merging, a 2-D transpose.
  Tensor x = arange(0, 96, 1, kFloat32).reshape(Shape{2, 1, 2, 1, 2, 1, 2, 1, 2, 3});
  Tensor y = permute(x, {0, 1, 2, 3, 4, 5, 6, 7, 9, 8});
  CHECK(y.shape() == Shape{2, 1, 2, 1, 2, 1, 2, 1, 3, 2});
  test::expect_values(y.reshape(Shape{-1}).narrow(0, 0, 6), {0, 3, 1, 4, 2, 5}, 0, "first [3, 2] block");
  // Nine dims that cannot merge: named in the error.
  test::expect_error_contains(
      [] { permute(zeros({2, 2, 2, 2, 2, 2, 2, 2, 2}), {8, 7, 6, 5, 4, 3, 2, 1, 0}); },
      {"permute", "9 non-contiguous dims", "more than the 8"});
}
