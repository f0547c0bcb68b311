#pragma once
// Dropout's mask, shared by the CPU and CUDA backends: element i of a draw at
// generator state (seed, offset) is kept iff philox_uniform(seed, offset, i) >= p,
// and the output is PyTorch's x * mask * scale with mask = 1 (kept) or 0 (dropped)
// and scale = 1 / (1 - p): a dropped finite value gives 0 (-0 when negative), a
// dropped inf or NaN gives NaN, as x * 0 does. The mask is a pure function of
// (seed, offset, i), so backward recomputes it instead of storing it, and a
// checkpointed segment that restores the generator state redraws the same mask.
//
//   const GeneratorState s = reserve_random(dropout_counters(x.numel()));
//   y[i] = dropout_apply(x[i], dropout_keep(s.seed, s.offset, i, p), dropout_scale(p));
//
// Feature dropout (Dropout2d) draws once per group of `group` consecutive elements (a channel's
// plane): element i takes draw i / group, so a channel is kept or zeroed whole.
#include <cstdint>

#include "core/hd.h"
#include "core/philox.h"

namespace ember::kernels {

// Philox counters one dropout draw of n elements uses (4 lanes per counter).
EMBER_HD uint64_t dropout_counters(int64_t n) { return static_cast<uint64_t>(n + 3) / 4; }

// One Philox lane's verdict. The uniform is in (0, 1], so p = 0 keeps everything; p = 1
// must drop everything, including the one value in 2^24 where the uniform is exactly 1.
EMBER_HD bool dropout_keep_bits(uint32_t bits, float p) { return p < 1.0f && uint_to_unit_float(bits) >= p; }

// Element i: philox_uniform(seed, offset, i) >= p. Loops that walk whole counters call
// philox4x32 once per 4 elements and dropout_keep_bits on each lane instead.
EMBER_HD bool dropout_keep(uint64_t seed, uint64_t offset, uint64_t i, float p) {
  return dropout_keep_bits(philox4x32(seed, offset + i / 4).v[i % 4], p);
}

EMBER_HD float dropout_scale(float p) { return p < 1.0f ? 1.0f / (1.0f - p) : 0.0f; }

// One output element in the compute type C (float for f16 and f32, double for f64):
// x * mask * scale, the mask a multiplier rather than a branch, so a dropped inf or NaN
// is NaN on both backends (PyTorch's semantics) and the CPU loop has no branch to
// mispredict.
template <class C>
EMBER_HD C dropout_apply(C x, bool keep, C scale) {
  return x * C(keep ? 1 : 0) * scale;
}

}  // namespace ember::kernels
