// ember's GEMM with AVX-512F (16 floats per vector, 32 registers): an 8 x 48 tile of C in 24
// accumulators; per step of the sum, 3 vector loads of B, 8 broadcasts of A, 24 multiply-adds.
// Compiled with -mavx512f -mfma (kernels/CMakeLists.txt); called only when cpu_isa() is avx512.
// GCC 12's AVX-512 intrinsics fill their unused inputs with undefined vectors and then warn of
// them (GCC bug 105593; _mm512_reduce_add_ps, below, is one).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
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
  using reg = __m512;
  static constexpr int kLanes = 16;
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
};

}  // namespace

#include "kernels/cpu/gemm_kernels.inc"

namespace {
using Kernels = GemmKernels<Vec, 8, 3, 256, 256, 3072>;
}  // namespace

GemmBlocking gemm_blocking_avx512() { return Kernels::blocking(); }
void gemm_avx512(const GemmProblem<float>& g) { Kernels::run(g); }
void gemm_pack_a_avx512(int64_t m, int64_t k, const float* a, int64_t lda, bool transpose_a, float* dst) {
  Kernels::pack_a_whole(m, k, a, lda, transpose_a, dst);
}
double fma_probe_avx512(int64_t iterations) { return fma_probe<Vec>(iterations); }

}  // namespace ember::kernels::cpu
