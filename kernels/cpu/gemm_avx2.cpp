// ember's GEMM with AVX2 + FMA (8 floats per vector, 16 registers): a 6 x 16 tile of C in 12
// accumulators; per step of the sum, 2 vector loads of B, 6 broadcasts of A, 12 multiply-adds.
// (A 4 x 24 tile, also 12 accumulators, needs all 16 registers at once and ran at 69% of the
// peak against this one's 92%: bench_gemm, docs/kernels.md.)
// Compiled with -mavx2 -mfma -mno-avx512f (kernels/CMakeLists.txt), so it is the code an
// AVX2-only machine runs even when built on an AVX-512 one; called only when cpu_isa() is avx2.
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "kernels/cpu/gemm_kernels.h"

namespace ember::kernels::cpu {
namespace {

struct Vec {
  using T = float;
  using reg = __m256;
  static constexpr int kLanes = 8;
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
};

}  // namespace

#include "kernels/cpu/gemm_kernels.inc"

namespace {
using Kernels = GemmKernels<Vec, 6, 2, 256, 240, 3072>;
}  // namespace

GemmBlocking gemm_blocking_avx2() { return Kernels::blocking(); }
void gemm_avx2(const GemmProblem<float>& g) { Kernels::run(g); }
void gemm_pack_a_avx2(int64_t m, int64_t k, const float* a, int64_t lda, bool transpose_a, float* dst) {
  Kernels::pack_a_whole(m, k, a, lda, transpose_a, dst);
}
double fma_probe_avx2(int64_t iterations) { return fma_probe<Vec>(iterations); }

}  // namespace ember::kernels::cpu
