#include "train/gradient_buckets.h"

#include "core/error.h"

namespace ember::train {

std::vector<GradientBucket> plan_gradient_buckets(const std::vector<int64_t>& param_numels, int64_t bucket_bytes,
                                                  int ranks) {
  EMBER_CHECK(bucket_bytes >= 1 && ranks >= 1,
              "plan_gradient_buckets: bucket_bytes = " << bucket_bytes << " and ranks = " << ranks << " must be >= 1");
  const int64_t capacity = bucket_bytes / static_cast<int64_t>(sizeof(float));
  std::vector<GradientBucket> buckets;
  GradientBucket open;
  auto close = [&] {
    if (open.slots.empty()) return;
    open.numel = (open.numel + ranks - 1) / ranks * ranks;
    buckets.push_back(std::move(open));
    open = GradientBucket{};
  };
  for (size_t i = param_numels.size(); i-- > 0;) {
    const int64_t n = param_numels[i];
    EMBER_CHECK(n >= 1, "plan_gradient_buckets: parameter " << i << " has " << n << " elements");
    if (!open.slots.empty() && open.numel + n > capacity) close();
    open.slots.push_back(BucketSlot{i, open.numel, n});
    open.numel += n;
  }
  close();
  return buckets;
}

}  // namespace ember::train
