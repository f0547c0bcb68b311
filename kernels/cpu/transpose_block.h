#pragma once
// An 8-column block of a matrix transposed, the packing step of ember's GEMM
// (kernels/cpu/gemm_kernels.inc) and of Winograd's channels-last weight gradient:
//
//   transpose_block<8>(src, lds, dst, ldd);   // dst[q * ldd + i] = src[i * lds + q]
//
// It is compiled into each instruction set's files with their own flags (an AVX path where
// __AVX__ is defined), so it has internal linkage: the copies never meet at link time.
#include <cstdint>
#include <type_traits>
#ifdef __AVX__
#include <immintrin.h>
#endif

namespace ember::kernels::cpu {
namespace {

// dst[q * ldd + i] = src[i * lds + q] for i < Rows, q < 8: eight columns of Rows stored rows,
// transposed. Packing an operand whose stored rows run along the sum is such a transpose (A as
// stored, B^T); in registers it costs a few shuffles per element, in scalar code a load and a
// store each.
template <int Rows, class T>
inline void transpose_block(const T* src, int64_t lds, T* dst, int64_t ldd) {
#ifdef __AVX__
  if constexpr (std::is_same_v<T, float> && Rows == 8) {
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // rows i, i+1: columns 0 1 | 4 5
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // columns 2 3 | 6 7
    }
    for (int h = 0; h < 2; ++h) {  // rows 0-3, then 4-7: columns 0..3 | 4..7, four rows each
      u[4 * h + 0] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
      u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xEE);
      u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
      u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xEE);
    }
    for (int q = 0; q < 4; ++q) {
      _mm256_storeu_ps(dst + q * ldd, _mm256_permute2f128_ps(u[q], u[4 + q], 0x20));
      _mm256_storeu_ps(dst + (q + 4) * ldd, _mm256_permute2f128_ps(u[q], u[4 + q], 0x31));
    }
    return;
  }
  if constexpr (std::is_same_v<T, float> && Rows == 4) {
    if (ldd == 4) {  // the four rows interleaved: 32 consecutive floats
      __m256 r[4], t[4], u[4];
      for (int i = 0; i < 4; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
      t[0] = _mm256_unpacklo_ps(r[0], r[1]);
      t[1] = _mm256_unpackhi_ps(r[0], r[1]);
      t[2] = _mm256_unpacklo_ps(r[2], r[3]);
      t[3] = _mm256_unpackhi_ps(r[2], r[3]);
      u[0] = _mm256_shuffle_ps(t[0], t[2], 0x44);  // column 0 | 4
      u[1] = _mm256_shuffle_ps(t[0], t[2], 0xEE);  // 1 | 5
      u[2] = _mm256_shuffle_ps(t[1], t[3], 0x44);  // 2 | 6
      u[3] = _mm256_shuffle_ps(t[1], t[3], 0xEE);  // 3 | 7
      _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u[0], u[1], 0x20));
      _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(u[2], u[3], 0x20));
      _mm256_storeu_ps(dst + 16, _mm256_permute2f128_ps(u[0], u[1], 0x31));
      _mm256_storeu_ps(dst + 24, _mm256_permute2f128_ps(u[2], u[3], 0x31));
      return;
    }
  }
#endif
  for (int q = 0; q < 8; ++q)
    for (int i = 0; i < Rows; ++i) dst[q * ldd + i] = src[i * lds + q];
}

}  // namespace
}  // namespace ember::kernels::cpu
