// find_out_of_range: the first index outside [0, limit) in flat order, which the
// entry points of cross_entropy and scatter_dim use to reject bad labels and
// indices with one message on both backends.
#include <vector>

#include "kernels/ops.h"
#include "tests/support/expect.h"

using namespace ember;
using test::expect_error_contains;

TEST_CASE("find_out_of_range finds the first index outside the range", "[indices]") {
  const Tensor ok = from_vector<int64_t>({0, 1, 2, 2, 0}, {5});
  CHECK_FALSE(kernels::find_out_of_range(ok, 3).found());
  const kernels::OutOfRange high = kernels::find_out_of_range(from_vector<int64_t>({0, 3, 2, 9}, {2, 2}), 3);
  CHECK(high.position == 1);
  CHECK(high.value == 3);
  const kernels::OutOfRange negative = kernels::find_out_of_range(from_vector<int64_t>({0, 1, -1, 5}, {4}), 3);
  CHECK(negative.position == 2);
  CHECK(negative.value == -1);
  CHECK_FALSE(kernels::find_out_of_range(zeros({0}, kInt64), 1).found());
  CHECK(kernels::find_out_of_range(zeros({2}, kInt64), 0).position == 0);  // nothing is in [0, 0)
}

TEST_CASE("find_out_of_range returns the first bad index whatever the thread count", "[indices]") {
  // Large enough to be split across threads: bad values late, early and in the middle; the
  // smallest position wins.
  const int64_t n = 1 << 20;
  std::vector<int64_t> values(static_cast<size_t>(n), 1);
  values[900000] = 7;
  values[600000] = -2;
  values[123457] = 4;
  const kernels::OutOfRange r = kernels::find_out_of_range(from_vector<int64_t>(values, {n}), 4);
  CHECK(r.position == 123457);
  CHECK(r.value == 4);
}

TEST_CASE("find_out_of_range wants i64 indices", "[indices][errors]") {
  expect_error_contains([] { kernels::find_out_of_range(zeros({3}), 2); }, {"find_out_of_range", "i64", "f32"});
}
