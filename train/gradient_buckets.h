#pragma once
// How data-parallel training (train/data_parallel.h) packs gradients for the wire: parameters
// in reverse order of registration (the order backward makes their gradients), filled into
// buckets of at most `bucket_bytes` of fp32 (a larger parameter gets a bucket of its own), each
// bucket's length rounded up to a multiple of the ranks so that it splits into equal shards
// (ZeRO): rank r owns elements [r * numel / ranks, (r + 1) * numel / ranks) of every bucket.
//
//   std::vector<GradientBucket> b = plan_gradient_buckets({100, 10, 6}, /*bucket_bytes=*/64, /*ranks=*/4);
//   // b[0]: parameters 2 and 1 (6 + 10 = 16 elements = 64 bytes), b[1]: parameter 0 (100)
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::train {

struct BucketSlot {
  size_t param = 0;    // index into the parameters
  int64_t offset = 0;  // first element in the bucket
  int64_t numel = 0;
};

struct GradientBucket {
  std::vector<BucketSlot> slots;  // in the order they were filled
  int64_t numel = 0;              // with the padding up to a multiple of the ranks
  int64_t shard_numel(int ranks) const { return numel / ranks; }
};

// fp32 elements: what the buckets carry whatever the parameters' dtype.
std::vector<GradientBucket> plan_gradient_buckets(const std::vector<int64_t>& param_numels, int64_t bucket_bytes,
                                                  int ranks);

}  // namespace ember::train
