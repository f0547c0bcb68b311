#pragma once
// core/philox.h's draws from a file compiled without optimisation or fused multiply-adds
// (tests/core/normal_draw_strict.cpp says why).
#include <cstdint>

namespace ember::test {

float strict_philox_normal(uint64_t seed, uint64_t offset, uint64_t i);
float strict_philox_uniform(uint64_t seed, uint64_t offset, uint64_t i);
float strict_scale_and_shift(float x, float scale, float shift);

}  // namespace ember::test
