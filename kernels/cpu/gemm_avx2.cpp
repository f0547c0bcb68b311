// ember's GEMM with AVX2 + FMA (8 floats per vector, 16 registers): a 6 x 16 tile of C in 12
// accumulators; per step of the sum, 2 vector loads of B, 6 broadcasts of A, 12 multiply-adds.
// (A 4 x 24 tile, also 12 accumulators, needs all 16 registers at once and ran at 69% of the
// peak against this one's 92%: bench_gemm, docs/kernels.md.)
// Compiled with -mavx2 -mfma -mno-avx512f (kernels/CMakeLists.txt), so it is the code an
// AVX2-only machine runs even when built on an AVX-512 one; called only when cpu_isa() is avx2.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/transpose_block.h"
#include "kernels/cpu/vec_avx2.h"

namespace ember::kernels::cpu {
namespace {

using Vec = Avx2Vec;

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
