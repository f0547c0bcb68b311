#include "data/sampler.h"

#include <numeric>
#include <utility>

#include "core/error.h"
#include "core/philox.h"

namespace ember::data {

std::vector<int64_t> epoch_order(int64_t n, bool shuffle, uint64_t seed, int64_t epoch) {
  EMBER_CHECK(n >= 0 && epoch >= 0, "epoch_order: n " << n << " and epoch " << epoch << " must be >= 0");
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (!shuffle) return order;
  const uint64_t offset = static_cast<uint64_t>(epoch) * static_cast<uint64_t>(n);
  for (int64_t i = n - 1, k = 0; i > 0; --i, ++k) {
    const uint32_t bits = philox4x32(seed, offset + static_cast<uint64_t>(k / 4)).v[k % 4];
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(uniform_below(bits, i + 1))]);
  }
  return order;
}

int64_t shard_size(int64_t n, int64_t ranks, ShardEnds ends, int64_t rank) {
  switch (ends) {
    case ShardEnds::pad: return (n + ranks - 1) / ranks;
    case ShardEnds::drop: return n / ranks;
    case ShardEnds::uneven: break;
  }
  return n / ranks + (rank < n % ranks ? 1 : 0);
}

std::vector<int64_t> shard_of(const std::vector<int64_t>& order, int64_t rank, int64_t ranks, ShardEnds ends) {
  EMBER_CHECK(ranks >= 1 && rank >= 0 && rank < ranks,
              "shard_of: rank " << rank << " of " << ranks << " ranks: need 0 <= rank < ranks");
  const auto n = static_cast<int64_t>(order.size());
  const int64_t count = shard_size(n, ranks, ends, rank);
  EMBER_CHECK(n > 0 || count == 0, "shard_of: an empty order has nothing to shard");
  std::vector<int64_t> part(static_cast<size_t>(count));
  // Position p of the padded (or cut) order is order[p % n]: padding repeats the start.
  for (int64_t i = 0; i < count; ++i) part[static_cast<size_t>(i)] = order[static_cast<size_t>((rank + i * ranks) % n)];
  return part;
}

GeneratorState transform_state(uint64_t seed, int64_t epoch, int64_t n) {
  return GeneratorState{seed ^ kTransformStream, static_cast<uint64_t>(epoch) * static_cast<uint64_t>(n)};
}

}  // namespace ember::data
