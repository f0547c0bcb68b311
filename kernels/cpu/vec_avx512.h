#pragma once
// One AVX-512F vector of 16 floats, as the register tiles of ember's own CPU kernels use it:
//
//   using Vec = Avx512Vec;                // in a file compiled with -mavx512f -mfma
//   Vec::reg acc = Vec::fma(Vec::broadcast(a), Vec::load(b), acc);
//
// Include it only from the files kernels/CMakeLists.txt compiles with those flags (the GEMM's
// and the direct convolution's AVX-512 tiles); unnamed namespace for the reason vec_avx2.h gives.
// GCC 12's AVX-512 intrinsics fill their unused inputs with undefined vectors and then warn of
// them where they are inlined (GCC bug 105593; _mm512_reduce_add_ps, below, is one), so the
// including file is spared those two warnings.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>

namespace ember::kernels::cpu {
namespace {

struct Avx512Vec {
  using T = float;
  using reg = __m512;
  static constexpr int kLanes = 16, kRegisters = 32;
  static reg zero() { return _mm512_setzero_ps(); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static reg broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static void store(float* p, reg v) { _mm512_storeu_ps(p, v); }
  static float sum(reg v) { return _mm512_reduce_add_ps(v); }
  static __mmask16 mask(int64_t lanes) { return static_cast<__mmask16>((1u << lanes) - 1u); }
  static reg load_part(const float* p, int64_t lanes) { return _mm512_maskz_loadu_ps(mask(lanes), p); }
  static void store_part(float* p, reg v, int64_t lanes) { _mm512_mask_storeu_ps(p, mask(lanes), v); }
  static reg load_halves(const float* lo, const float* hi) {
    const __m512d low = _mm512_castps_pd(_mm512_castps256_ps512(_mm256_loadu_ps(lo)));
    return _mm512_castpd_ps(_mm512_insertf64x4(low, _mm256_castps_pd(_mm256_loadu_ps(hi)), 1));
  }
  static void keep(reg& v) { asm("" : "+v"(v)); }  // v now comes from a register: its load stays a load
};

}  // namespace
}  // namespace ember::kernels::cpu
