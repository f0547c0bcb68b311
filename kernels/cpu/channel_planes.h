#pragma once
// A tensor [N, C, *] (channels on dim 1) walked as its N * C planes in memory order, and a
// channel's total made from its planes' sums in a fixed order: batch norm's passes and the
// convolution's bias gradient.
//
//   const ChannelLayout l = channel_layout(dy.shape());
//   std::vector<double> sums(static_cast<size_t>(l.planes()));
//   for_each_plane(l, [&](int64_t p) { sums[p] = <the sum of plane p, dy.data<T>() + p * l.inner>; });
//   const double total = sum_over_batch(l, sums, c);  // channel c's planes added over n = 0, 1, ...
//
// Planes, not channels, are split between the threads: a channel's planes lie C * H * W apart,
// each 196 B to 3 KiB on the zoo's layers, too short for the hardware prefetch (walked a channel
// at a time, batch norm's backward ran 20-35% slower). A plane's sum is the caller's; the totals
// add them in double in n order, so they have the same bits on any number of threads.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "kernels/cpu/parallel.h"

namespace ember::kernels::cpu {

struct ChannelLayout {
  int64_t batch, channels, inner;
  int64_t planes() const { return batch * channels; }
  int64_t count() const { return batch * inner; }  // values per channel
  int64_t plane(int64_t n, int64_t c) const { return (n * channels + c) * inner; }
};

inline ChannelLayout channel_layout(const Shape& shape) {
  ChannelLayout l{shape[0], shape[1], 1};
  for (int64_t d = 2; d < shape.dim(); ++d) l.inner *= shape[d];
  return l;
}

// fn(p) for every plane p, in memory order, contiguous ranges of planes to the threads.
template <class Fn>
void for_each_plane(const ChannelLayout& l, const Fn& fn) {
  parallel_for(l.planes(), std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, l.inner)), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) fn(p);
  });
}

// Channel c's total of per-plane sums, in double, over n = 0, 1, ... (the order fixes the bits).
inline double sum_over_batch(const ChannelLayout& l, const std::vector<double>& per_plane, int64_t c) {
  double total = 0.0;
  for (int64_t n = 0; n < l.batch; ++n) total += per_plane[static_cast<size_t>(n * l.channels + c)];
  return total;
}

}  // namespace ember::kernels::cpu
