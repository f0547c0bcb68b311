#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
// Counter-based: the i-th number depends only on (seed, counter), so the CPU and
// a CUDA kernel produce the same stream without sharing state.
//
// Stream layout used by every random op: element i of a draw that starts at
// counter `offset` uses philox(seed, offset + i / 4), lane i % 4.
#include <cstdint>

#include "core/hd.h"
#include "core/portable_math.h"

namespace ember {

struct PhiloxOutput {
  uint32_t v[4];
};

EMBER_HD uint32_t philox_mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(product >> 32);
  return static_cast<uint32_t>(product);
}

EMBER_HD PhiloxOutput philox4x32(uint64_t seed, uint64_t counter) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, hi1;
    const uint32_t lo0 = philox_mulhilo(kMul0, c0, &hi0);
    const uint32_t lo1 = philox_mulhilo(kMul1, c2, &hi1);
    const uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return PhiloxOutput{{c0, c1, c2, c3}};
}

// Uniform in (0, 1]: never 0, so log() is safe for Box-Muller.
EMBER_HD float uint_to_unit_float(uint32_t x) {
  return (static_cast<float>(x >> 8) + 1.0f) * (1.0f / 16777216.0f);
}

// Uniform element i: lane i % 4 of counter offset + i / 4. The _lane forms take that counter's
// output, for loops that compute each counter once for the elements sharing it.
EMBER_HD float philox_uniform_lane(const PhiloxOutput& r, uint64_t i) { return uint_to_unit_float(r.v[i % 4]); }
EMBER_HD float philox_uniform(uint64_t seed, uint64_t offset, uint64_t i) {
  return philox_uniform_lane(philox4x32(seed, offset + i / 4), i);
}

// Standard normal for element i: Box-Muller on lanes (0,1) or (2,3) of counter offset + i/2,
// in double with core/portable_math.h's log and cos and rounded to float once, so that every
// backend draws the same bits (libm's logf/cosf and CUDA's differ in the last ones).
EMBER_HD float philox_normal_lane(const PhiloxOutput& r, uint64_t i) {
  const int lane = static_cast<int>(i % 2) * 2;
  const double u1 = uint_to_unit_float(r.v[lane]);
  const double u2 = uint_to_unit_float(r.v[lane + 1]);
  return static_cast<float>(::sqrt(-2.0 * portable_log(u1)) * portable_cos_2pi(u2));
}
EMBER_HD float philox_normal(uint64_t seed, uint64_t offset, uint64_t i) {
  return philox_normal_lane(philox4x32(seed, offset + i / 2), i);
}

// x * scale + shift as one fma on every backend: the scale-and-shift of a uniform or normal
// draw, written so no compiler fuses it on one backend and not on another.
EMBER_HD float scale_and_shift(float x, float scale, float shift) { return ::fmaf(x, scale, shift); }

}  // namespace ember
