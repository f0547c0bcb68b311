#pragma once
// The CPU's matrix product: C = op(A) op(B) (+ beta C) (+ a bias per row), row-major, f32 and
// f64. matmul, linear and the convolutions (im2col and Winograd's tile products) all call it.
//
//   cpu::gemm<float>(m, n, k, {a, lda}, {b, ldb, /*transposed=*/true}, {c, ldc});
//   const cpu::PackedA<float> w(oc, ckk, {weight, ckk});   // a conv's weights, packed once ...
//   for (image ...) cpu::gemm(w, pixels, {cols, pixels}, {y_n, pixels, 0.0f, bias});  // ... for every image
//
// Two providers, chosen at run time (kernels/providers.h), as cuBLAS is on the GPU:
//   EMBER_CPU_GEMM=ember     ember's own (the default): BLIS's loops around a register-tiled
//                            micro-kernel, compiled for AVX-512, for AVX2 + FMA and portably
//                            and chosen by cpu_isa() (kernels/cpu/gemm_kernels.inc)
//   EMBER_CPU_GEMM=openblas  OpenBLAS through Eigen (a build with OpenBLAS): the reference
// Both run on OpenMP's threads (kernels/cpu/parallel.h's pool) when called outside a parallel
// region and the product is large enough, single-threaded inside one (a convolution's threads
// each run their own images' products).
//
// Error: each element is a sum of k products (plus beta C and the bias) in some order, so it is
// within gamma(k + 2) of the sum of |terms| (tests/support/error_bound.h), whichever provider,
// instruction set, blocking and thread split computed it.
//
// ember's packed panels live in per-thread buffers of the GEMM's own (a few hundred KiB per
// thread, not tensors), as OpenBLAS's do; a PackedA is a tensor of the workspace category.
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "kernels/cpu/cpu_isa.h"

namespace ember::kernels::cpu {

// An operand as stored, row-major: element (i, j) of op(X) is data[i * ld + j], or
// data[j * ld + i] when transposed.
template <class T>
struct MatrixRef {
  const T* data;
  int64_t ld;
  bool transposed = false;
};

// The output: data[i * ld + j] = product + beta * (its old value, read only when beta != 0,
// so an unwritten output may hold anything) + row_bias[i] (row_bias may be null).
template <class T>
struct GemmOutput {
  T* data;
  int64_t ld;
  T beta = T(0);
  const T* row_bias = nullptr;
};

// C [m, n] = op(A) [m, k] op(B) [k, n] (+ beta C) (+ row bias). k = 0 gives beta C + bias.
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, MatrixRef<T> a, MatrixRef<T> b, GemmOutput<T> c);

template <class T>
class PackedA;

// One PackedA per operand, all m x k (Winograd's transformed kernels, one per tap): allocated in
// order, then packed with the operands split between the threads (outside a parallel region).
template <class T>
std::vector<PackedA<T>> pack_each(int64_t m, int64_t k, const std::vector<MatrixRef<T>>& operands);

// op(A) [m, k] packed once, for many products with the same A (a convolution's weights across
// its batch, Winograd's transformed kernels across groups of tiles). Under ember's provider the
// constructor allocates the packed copy (a workspace tensor, so the memory report and the
// planner see it) and packs A into it, unless the allocator only simulates; under OpenBLAS it
// keeps the pointer, and A must outlive it. Use it on the instruction set it was packed for.
template <class T>
class PackedA {
 public:
  PackedA(int64_t m, int64_t k, MatrixRef<T> a);
  int64_t rows() const { return m_; }
  int64_t depth() const { return k_; }
  const MatrixRef<T>& operand() const { return a_; }
  const T* packed() const;  // null when the OpenBLAS provider keeps A as it is
  CpuIsa isa() const { return isa_; }

 private:
  friend std::vector<PackedA<T>> pack_each<T>(int64_t, int64_t, const std::vector<MatrixRef<T>>&);
  PackedA(int64_t m, int64_t k, MatrixRef<T> a, bool pack_now);
  void pack();

  int64_t m_, k_;
  MatrixRef<T> a_;
  CpuIsa isa_;
  Tensor packed_;
  // packed_'s data, which every product reads: through the tensor, the two dependent loads
  // (its impl, then its storage) took 0.9% of ResNet-20's two-thread samples
  T* packed_data_ = nullptr;
};

// C [m, n] = A op(B) (+ beta C) (+ row bias) with A packed beforehand.
template <class T>
void gemm(const PackedA<T>& a, int64_t n, MatrixRef<T> b, GemmOutput<T> c);

// How long the rows of a transposed A [m, k] (stored [k][ld]) should be for ember's kernel to
// read it where it lies (kernels/cpu/gemm_kernels.inc, a_in_place): m rounded up to the kernel's
// panel of rows (8 on AVX-512, 6 on AVX2), where that is at most kGemmInPlaceRowBytes (288);
// otherwise m, and A is packed for every product. A caller that lays out such an operand itself
// (Winograd's weight gradient, dM) pads its rows to this.
template <class T>
int64_t gemm_transposed_a_rows(int64_t m);

// Flops (2 per multiply-add) the CPU's products performed since the program started: every
// gemm and the direct convolution's tiles (kernels/cpu/conv2d_direct.h), whichever provider.
// `ember bench-train` reads it around its timed steps.
int64_t cpu_product_flops();
void count_product_flops(int64_t flops);

}  // namespace ember::kernels::cpu
