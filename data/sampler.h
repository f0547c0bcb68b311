#pragma once
// Which samples an epoch visits, in which order, and the random state of its
// transforms. Both depend only on (seed, epoch), so a run is reproducible and a
// resumed run can jump straight to epoch k:
//
//   std::vector<int64_t> order = ember::data::epoch_order(60000, /*shuffle=*/true, /*seed=*/1, /*epoch=*/3);
//
// The shuffle is Fisher-Yates with Philox draws: draw k of epoch e comes from
// philox(seed, e * n + k / 4), lane k % 4. Transforms use another key
// (seed ^ kTransformStream) with counter e * n + sample, so the streams never meet.
#include <cstdint>
#include <vector>

#include "core/generator.h"

namespace ember::data {

inline constexpr uint64_t kTransformStream = 0x7472616e73666f72ull;  // "transfor"

// Uniform integer in [0, bound) from 32 random bits (multiply-shift; bias below bound / 2^32).
inline int64_t uniform_below(uint32_t bits, int64_t bound) {
  return static_cast<int64_t>((static_cast<uint64_t>(bits) * static_cast<uint64_t>(bound)) >> 32);
}

// A permutation of 0..n-1 (the identity without shuffle).
std::vector<int64_t> epoch_order(int64_t n, bool shuffle, uint64_t seed, int64_t epoch);

// How a sharded epoch ends when the ranks do not divide its samples (PyTorch's DistributedSampler
// pads or, with drop_last, cuts; evaluation wants every sample once, in parts of unequal size).
enum class ShardEnds : uint8_t {
  pad,     // equal parts: the order is padded by repeating its start up to a multiple of the ranks
  drop,    // equal parts: the order is cut down to a multiple of the ranks
  uneven,  // every sample once: the first n % ranks ranks get one sample more
};

// Rank `rank` of `ranks`'s part of an epoch's order, as PyTorch's DistributedSampler makes it:
// the order (the same on every rank: same seed and epoch) is padded or cut as `ends` says, and
// the rank takes every ranks-th sample from position `rank`. The parts are disjoint but for the
// padding's repeats; rank `rank` gets shard_size(n, ranks, ends, rank) samples.
//
//   shard_of({4, 0, 3, 1, 2}, /*rank=*/1, /*ranks=*/2, ShardEnds::pad) == {0, 1, 4}   // padded with 4
//   shard_of({4, 0, 3, 1, 2}, /*rank=*/1, /*ranks=*/2, ShardEnds::uneven) == {0, 1}
std::vector<int64_t> shard_of(const std::vector<int64_t>& order, int64_t rank, int64_t ranks, ShardEnds ends);
int64_t shard_size(int64_t n, int64_t ranks, ShardEnds ends, int64_t rank);
// The generator state for the random transforms of `epoch` over a dataset of n samples.
GeneratorState transform_state(uint64_t seed, int64_t epoch, int64_t n);

}  // namespace ember::data
