// ember's GEMM without intrinsics: the same loops and packing as the AVX2 and AVX-512 kernels
// over the compiler's generic vectors (32 bytes: 8 floats or 4 doubles, lowered to whatever
// the build targets), a 4 x 3-vector tile. It serves f64 everywhere, f32 under
// EMBER_CPU_ISA=baseline, and any CPU without AVX2.
#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/transpose_block.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

// Vectors passed by value between functions that all inline: no ABI is crossed.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace ember::kernels::cpu {
namespace {

template <class Scalar>
struct PortableVec {
  using T = Scalar;
  typedef Scalar reg __attribute__((vector_size(32)));
  static constexpr int kLanes = 32 / sizeof(Scalar), kRegisters = 16;
  static reg zero() { return reg{}; }
  static reg load(const T* p) {
    reg v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static reg broadcast(const T* p) { return reg{} + *p; }
  static reg fma(reg a, reg b, reg c) { return a * b + c; }
  static reg add(reg a, reg b) { return a + b; }
  static void store(T* p, reg v) { std::memcpy(p, &v, sizeof v); }
  static T sum(reg v) {
    T s = T(0);
    for (int l = 0; l < kLanes; ++l) s += v[l];
    return s;
  }
  // (lanes never exceeds kLanes; the clamp says so to the compiler, which otherwise warns of an
  // overrun on paths the tile's callers never take)
  static reg load_part(const T* p, int64_t lanes) {
    reg v{};
    std::memcpy(&v, p, static_cast<size_t>(std::min<int64_t>(lanes, kLanes)) * sizeof(T));
    return v;
  }
  static void store_part(T* p, reg v, int64_t lanes) {
    std::memcpy(p, &v, static_cast<size_t>(std::min<int64_t>(lanes, kLanes)) * sizeof(T));
  }
  static reg load_halves(const T* lo, const T* hi) {
    reg v;
    std::memcpy(&v, lo, sizeof v / 2);
    std::memcpy(reinterpret_cast<char*>(&v) + sizeof v / 2, hi, sizeof v / 2);
    return v;
  }
  static void keep(reg&) {}  // the compiler's choice: no register constraint that every target has
};

}  // namespace

#include "kernels/cpu/gemm_kernels.inc"

namespace {
template <class T>
using Kernels = GemmKernels<PortableVec<T>, 4, 3, 256, 256, 3072>;
}  // namespace

template <class T>
GemmBlocking gemm_blocking_portable() {
  return Kernels<T>::blocking();
}
template <class T>
void gemm_portable(const GemmProblem<T>& g) {
  Kernels<T>::run(g);
}
template <class T>
void gemm_pack_a_portable(int64_t m, int64_t k, const T* a, int64_t lda, bool transpose_a, T* dst) {
  Kernels<T>::pack_a_whole(m, k, a, lda, transpose_a, dst);
}
double fma_probe_portable(int64_t iterations) { return fma_probe<PortableVec<float>>(iterations); }

template GemmBlocking gemm_blocking_portable<float>();
template GemmBlocking gemm_blocking_portable<double>();
template void gemm_portable<float>(const GemmProblem<float>&);
template void gemm_portable<double>(const GemmProblem<double>&);
template void gemm_pack_a_portable<float>(int64_t, int64_t, const float*, int64_t, bool, float*);
template void gemm_pack_a_portable<double>(int64_t, int64_t, const double*, int64_t, bool, double*);

}  // namespace ember::kernels::cpu
