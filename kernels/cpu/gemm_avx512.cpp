// ember's GEMM with AVX-512F (16 floats per vector, 32 registers): an 8 x 48 tile of C in 24
// accumulators; per step of the sum, 3 vector loads of B, 8 broadcasts of A, 24 multiply-adds.
// Compiled with -mavx512f -mfma (kernels/CMakeLists.txt); called only when cpu_isa() is avx512.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/transpose_block.h"
#include "kernels/cpu/vec_avx512.h"

namespace ember::kernels::cpu {
namespace {

using Vec = Avx512Vec;

}  // namespace

#include "kernels/cpu/gemm_kernels.inc"

namespace {
// PairNarrow: 16 accumulators for a one-vector panel (bench_gemm --zoo=resnet20: 16 x 16 x 196
// from 189 to 213 GFLOP/s, 64 x 64 x 192 from 219 to 242); AVX2's 12 in 16 registers gained
// nothing there.
using Kernels = GemmKernels<Vec, 8, 3, 256, 256, 3072, true>;
}  // namespace

GemmBlocking gemm_blocking_avx512() { return Kernels::blocking(); }
void gemm_avx512(const GemmProblem<float>& g) { Kernels::run(g); }
void gemm_pack_a_avx512(int64_t m, int64_t k, const float* a, int64_t lda, bool transpose_a, float* dst) {
  Kernels::pack_a_whole(m, k, a, lda, transpose_a, dst);
}
double fma_probe_avx512(int64_t iterations) { return fma_probe<Vec>(iterations); }

}  // namespace ember::kernels::cpu
