// core/philox.h's normal draw compiled as strictly as C++ allows: no optimisation, no fused
// multiply-adds (tests/CMakeLists.txt sets -O0 -ffp-contract=off -mno-fma for this file alone).
// tests/core/test_portable_math.cpp compares it bit for bit with what the library's randn drew,
// compiled with -O3 -march=native: a multiply-add left unfused in the source would be fused
// there and not here, as nvcc might fuse it and GCC not, and the draws would differ.
#include "tests/core/normal_draw_strict.h"

#include "core/philox.h"

namespace ember::test {

float strict_philox_normal(uint64_t seed, uint64_t offset, uint64_t i) { return philox_normal(seed, offset, i); }

float strict_philox_uniform(uint64_t seed, uint64_t offset, uint64_t i) { return philox_uniform(seed, offset, i); }

float strict_scale_and_shift(float x, float scale, float shift) { return scale_and_shift(x, scale, shift); }

}  // namespace ember::test
