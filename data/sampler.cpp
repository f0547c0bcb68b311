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

GeneratorState transform_state(uint64_t seed, int64_t epoch, int64_t n) {
  return GeneratorState{seed ^ kTransformStream, static_cast<uint64_t>(epoch) * static_cast<uint64_t>(n)};
}

}  // namespace ember::data
