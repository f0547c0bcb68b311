#pragma once
// Software prefetch of a short range, for loops that walk planes far apart (a batch's (n, c)
// planes are C * H * W apart, a few KiB each: too short for the hardware's stream prefetch to
// ramp up before each one ends):
//
//   prefetch_range(next_plane, h * w);          // read soon
//   prefetch_range(next_out, h * w, /*write=*/true);
#include <cstdint>

namespace ember::kernels::cpu {

// Asks for the cache lines of p[0, count), for writing when `write`.
template <class T>
inline void prefetch_range(const T* p, int64_t count, bool write = false) {
  constexpr int64_t kLine = 64 / static_cast<int64_t>(sizeof(T));
  for (int64_t i = 0; i < count; i += kLine) {
    if (write) __builtin_prefetch(p + i, 1);
    else __builtin_prefetch(p + i);
  }
}

}  // namespace ember::kernels::cpu
