#pragma once
// One AVX2 + FMA vector of 8 floats, as the register tiles of ember's own CPU kernels use it:
//
//   using Vec = Avx2Vec;                  // in a file compiled with -mavx2 -mfma -mno-avx512f
//   Vec::reg acc = Vec::fma(Vec::broadcast(a), Vec::load(b), acc);
//
// Include it only from the files kernels/CMakeLists.txt compiles with those flags (the GEMM's
// and the direct convolution's AVX2 tiles). It is in an unnamed namespace on purpose: every file
// gets its own copy, so the linker never merges it with code built for another instruction set.
#include <immintrin.h>

#include <cstdint>

namespace ember::kernels::cpu {
namespace {

struct Avx2Vec {
  using T = float;
  using reg = __m256;
  static constexpr int kLanes = 8, kRegisters = 16;
  static reg zero() { return _mm256_setzero_ps(); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static reg broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static float sum(reg v) {  // halves, then pairs, then the last two
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
  static __m256i mask(int64_t lanes) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static reg load_part(const float* p, int64_t lanes) { return _mm256_maskload_ps(p, mask(lanes)); }
  static void store_part(float* p, reg v, int64_t lanes) { _mm256_maskstore_ps(p, mask(lanes), v); }
  static void keep(reg& v) { asm("" : "+x"(v)); }  // v now comes from a register: its load stays a load
};

}  // namespace
}  // namespace ember::kernels::cpu
