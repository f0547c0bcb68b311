// train::plan_gradient_buckets: reverse registration order, the byte cap, shards of equal size.
#include <catch2/catch.hpp>

#include "tests/support/expect.h"
#include "train/gradient_buckets.h"

using namespace ember;
using namespace ember::test;

TEST_CASE("gradient buckets: filled from the last parameter, capped, padded to whole shards") {
  const std::vector<train::GradientBucket> b = train::plan_gradient_buckets({100, 10, 6}, /*bucket_bytes=*/64, 4);
  REQUIRE(b.size() == 2);
  REQUIRE(b[0].slots.size() == 2);
  CHECK(b[0].slots[0].param == 2);
  CHECK(b[0].slots[0].offset == 0);
  CHECK(b[0].slots[1].param == 1);
  CHECK(b[0].slots[1].offset == 6);
  CHECK(b[0].numel == 16);  // 64 bytes of fp32, already a multiple of 4
  REQUIRE(b[1].slots.size() == 1);
  CHECK(b[1].slots[0].param == 0);  // larger than the cap: a bucket of its own
  CHECK(b[1].numel == 100);
  CHECK(b[1].shard_numel(4) == 25);

  const std::vector<train::GradientBucket> padded = train::plan_gradient_buckets({5, 2}, 1 << 20, 3);
  REQUIRE(padded.size() == 1);
  CHECK(padded[0].numel == 9);  // 7 elements up to a multiple of 3 ranks
  CHECK(padded[0].shard_numel(3) == 3);

  // Every element of every parameter once, in some bucket.
  const std::vector<int64_t> sizes = {3, 1000, 17, 64, 5};
  std::vector<int64_t> seen(sizes.size(), 0);
  for (const train::GradientBucket& bucket : train::plan_gradient_buckets(sizes, 400, 2)) {
    int64_t end = 0;
    for (const train::BucketSlot& slot : bucket.slots) {
      CHECK(slot.offset == end);  // packed in fill order
      end += slot.numel;
      seen[slot.param] += slot.numel;
    }
    CHECK(bucket.numel >= end);
    CHECK(bucket.numel - end < 2);
    CHECK(bucket.numel % 2 == 0);
  }
  CHECK(seen == sizes);
  expect_error_contains([] { train::plan_gradient_buckets({4, 0}, 64, 2); }, {"parameter 1 has 0 elements"});
}
