#pragma once
// What ember's GEMM (kernels/cpu/gemm.h) shares with its per-instruction-set halves:
// gemm_avx2.cpp and gemm_avx512.cpp compile gemm_kernels.inc with their own -m flags,
// gemm_portable.cpp compiles it with the build's, and gemm.cpp calls the one cpu_isa() names.
// This header is all they share, so it includes nothing a flag could change.
#include <cstdint>

namespace ember::kernels::cpu {

// One product on one thread: C = op(A) op(B) + beta C + row_bias, all row-major.
//   op(A) [m, k]: element (i, p) is a[i * lda + p], or a[p * lda + i] when transpose_a
//   op(B) [k, n]: element (p, j) is b[p * ldb + j], or b[j * ldb + p] when transpose_b
//   C [m, n]: c[i * ldc + j]; read only when beta != 0 (so an unwritten C may hold NaN)
//   row_bias [m] or null: added to every element of row i once
// When packed_a is set, A was packed whole beforehand (GemmKernels::pack_a, for a matrix of
// packed_rows rows rounded up to mr) and this product uses its rows from packed_row0 on (a
// multiple of mr); a and lda are then unused.
template <class T>
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  const T* a = nullptr;
  int64_t lda = 0;
  bool transpose_a = false;
  const T* b = nullptr;
  int64_t ldb = 0;
  bool transpose_b = false;
  T* c = nullptr;
  int64_t ldc = 0;
  T beta = T(0);
  const T* row_bias = nullptr;
  const T* packed_a = nullptr;
  int64_t packed_rows = 0, packed_row0 = 0;
};

// The cache blocking and register tile of one instruction set's kernel (BLIS's names):
//   mr x nr   the micro-tile of C held in registers (nr a multiple of the vector width)
//   kc        the depth of one packed panel: a kc x nr panel of B stays in L1
//   mc        rows of A packed per block (mc x kc in L2)
//   nc        columns of B packed per block (kc x nc in L3)
struct GemmBlocking {
  int64_t mr, nr, kc, mc, nc;
};

// The longest stored rows (bytes) of a transposed A that a kernel reads where it lies
// (gemm_kernels.inc, a_in_place; gemm.h, gemm_transposed_a_rows): 72 floats, AVX2's 6-row
// panels over 64 channels (bench_gemm, EMBER_CPU_ISA=avx2: 64 x 64 x 196 from 0.92x of
// OpenBLAS's Haswell kernel packed to 1.09x in place).
inline constexpr int64_t kGemmInPlaceRowBytes = 288;

// Elements pack_a writes for an m x k matrix: m rounded up to mr, times k.
inline int64_t packed_a_size(const GemmBlocking& b, int64_t m, int64_t k) { return (m + b.mr - 1) / b.mr * b.mr * k; }

// Each instruction set's entry points: its blocking; one product on the calling thread (packing
// into its own thread-local buffers); op(A) [m, k] packed whole into dst (packed_a_size
// elements); and the FMA-peak probe: `iterations` rounds of independent vector multiply-adds on
// the calling thread, returning the flops it did.
GemmBlocking gemm_blocking_avx512();
void gemm_avx512(const GemmProblem<float>& g);
void gemm_pack_a_avx512(int64_t m, int64_t k, const float* a, int64_t lda, bool transpose_a, float* dst);
double fma_probe_avx512(int64_t iterations);

GemmBlocking gemm_blocking_avx2();
void gemm_avx2(const GemmProblem<float>& g);
void gemm_pack_a_avx2(int64_t m, int64_t k, const float* a, int64_t lda, bool transpose_a, float* dst);
double fma_probe_avx2(int64_t iterations);

// The portable kernel: plain C++ over the compiler's generic vectors, f32 and f64.
template <class T>
GemmBlocking gemm_blocking_portable();
template <class T>
void gemm_portable(const GemmProblem<T>& g);
template <class T>
void gemm_pack_a_portable(int64_t m, int64_t k, const T* a, int64_t lda, bool transpose_a, T* dst);
double fma_probe_portable(int64_t iterations);

}  // namespace ember::kernels::cpu
