#pragma once
// How Winograd's forward tile transforms (kernels/cpu/conv2d_winograd.cpp) run over a row of
// tiles several tiles at a time, the lanes of one vector being consecutive tiles:
//
//   using Lanes = LanesFor<float>;                       // Float8Lanes: eight tiles a vector
//   const Lanes::V x = Lanes::column(row, 8, j);         // column j of the eight tiles at row
//   Lanes::store_pairs(out, even, odd);                  // out[2t] = even[t], out[2t + 1] = odd[t]
//
// and, on AVX-512, Float16Quads: the sixteen tiles of four rows of a plane four tiles wide.
//
// Only conv2d_winograd.cpp includes it: it is compiled with that file's flags, and everything
// here has internal linkage.
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace ember::kernels::cpu {
namespace {

// The tile transforms run over a row of tiles several tiles at a time: Lanes is ScalarLanes<T>
// (one tile) or, for f32, Float8Lanes (eight consecutive tiles in one 8-wide vector; GCC and
// Clang vector extensions, compiled for this machine's widest unit). Column j of the tiles at
// `row` (row points at the first tile's first column, tile t starting 2t further) is
// column(row, 8, j). A vector step may run past the row's last tile: it reads into slack that
// every buffer it reads has, and writes into columns that are written again later (the next
// tile row, the next image, the next channel's row: the loops run channel by channel) or
// never read (the tap blocks' skew), so nothing it leaves behind is ever used.
// A plane four tiles wide (ResNet-20's 7x7 layers) would leave half of each vector idle, so
// there one vector takes two rows of tiles (pair_rows): lanes 0-3 the tiles of row th, lanes
// 4-7 those of row th + 1, which are the next four columns of V and M; column(row, next, j)
// reads the upper lanes' inputs `next` elements after the lower ones'.
template <class T>
struct ScalarLanes {
  using V = T;
  static constexpr int64_t width = 1;
  static V column(const T* row, int64_t, int j) { return row[j]; }
  static V load(const T* p) { return *p; }
  static void store(T* p, V v) { *p = v; }
  static void store_pairs(T* p, V even, V odd) {  // p[2t] = even, p[2t + 1] = odd
    p[0] = even;
    p[1] = odd;
  }
  template <int J>
  static V column4(const T* row, int64_t) { return row[J]; }
  static void store_quads(T* p, V y0, V y1, V y2, V y3) {  // p[4t + j] = yj
    p[0] = y0;
    p[1] = y1;
    p[2] = y2;
    p[3] = y3;
  }
};

struct Float8Lanes {
  typedef float V __attribute__((vector_size(32)));
  static constexpr int64_t width = 8;
  static V load(const float* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, V v) { std::memcpy(p, &v, sizeof v); }
  // row[2t + j] for t < 4, then next[2t + j] for t < 4 (next = row + 8: row[2t + j] for
  // t < 8, reading row[0, 18))
  static V column(const float* row, int64_t next, int j) {
    const float* base = row + (j & 2);
    const V lo = load(base), hi = load(base + next);
    return (j & 1) != 0 ? __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15)
                        : __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
  }
  static void store_pairs(float* p, V even, V odd) {
    store(p, __builtin_shufflevector(even, odd, 0, 8, 1, 9, 2, 10, 3, 11));
    store(p + 8, __builtin_shufflevector(even, odd, 4, 12, 5, 13, 6, 14, 7, 15));
  }
  // F(4x4): row[4t + J] for t < 4, then next[4t + J] for t < 4 (next = row + 16: row[4t + J]
  // for t < 8, reading row[0, 36))
  template <int J>
  static V column4(const float* row, int64_t next) {
    constexpr int k = J & 3;
    const float* base = row + (J & 4);
    const V a = load(base), b = load(base + 8), c = load(base + next), d = load(base + next + 8);
    const V lo = __builtin_shufflevector(a, b, k, k + 4, k + 8, k + 12, k, k + 4, k + 8, k + 12);
    const V hi = __builtin_shufflevector(c, d, k, k + 4, k + 8, k + 12, k, k + 4, k + 8, k + 12);
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 8, 9, 10, 11);
  }
  static void store_quads(float* p, V y0, V y1, V y2, V y3) {  // p[4t + j] = yj[t], t < 8
    const V a = __builtin_shufflevector(y0, y1, 0, 8, 1, 9, 2, 10, 3, 11);  // y0 y1 of tiles 0-3
    const V b = __builtin_shufflevector(y2, y3, 0, 8, 1, 9, 2, 10, 3, 11);
    const V c = __builtin_shufflevector(y0, y1, 4, 12, 5, 13, 6, 14, 7, 15);  // tiles 4-7
    const V d = __builtin_shufflevector(y2, y3, 4, 12, 5, 13, 6, 14, 7, 15);
    store(p, __builtin_shufflevector(a, b, 0, 1, 8, 9, 2, 3, 10, 11));
    store(p + 8, __builtin_shufflevector(a, b, 4, 5, 12, 13, 6, 7, 14, 15));
    store(p + 16, __builtin_shufflevector(c, d, 0, 1, 8, 9, 2, 3, 10, 11));
    store(p + 24, __builtin_shufflevector(c, d, 4, 5, 12, 13, 6, 7, 14, 15));
  }
};

#if defined(__AVX512F__) && defined(__AVX512VL__)
// Sixteen tiles in one 16-wide vector: four whole rows of a plane four tiles wide (ResNet-20's
// 14x14 F(4x4) and 7x7 F(2x2) layers, ConvNet's 14x14 ones), lanes 4i + t tile t of the step's
// tile row i, so a step's 16 lanes are 16 consecutive columns of V and M and it overruns
// nothing. Half the instructions of two Float8Lanes steps, and each output row is stored
// straight into its plane, clipped by a mask, where the paired rows went through row buffers.
// Only for planes whose tile rows come in fours (quad_rows_apply).
#define EMBER_WINOGRAD_QUAD_ROWS 1
struct Float16Quads {
  typedef float V __attribute__((vector_size(64)));
  static constexpr int64_t width = 16;
  static constexpr int64_t rows = 4;  // tile rows a step holds
  static V load(const float* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, V v) { std::memcpy(p, &v, sizeof v); }
  // Lanes 4i + t: row[i * next + S t + J], a tile S apart from the next (S = 2: F(2x2), 4:
  // F(4x4)); each tile row's four values come from the 16 floats from row + i * next + J - J % S.
  template <int S, int J>
  static V gather(const float* row, int64_t next) {
    constexpr int k = J % S;
    const float* base = row + (J - k);
    const V a = load(base), b = load(base + next), c = load(base + 2 * next), d = load(base + 3 * next);
    const V lo = __builtin_shufflevector(a, b, k, k + S, k + 2 * S, k + 3 * S, 16 + k, 16 + k + S, 16 + k + 2 * S,
                                         16 + k + 3 * S, 0, 0, 0, 0, 0, 0, 0, 0);
    const V hi = __builtin_shufflevector(c, d, k, k + S, k + 2 * S, k + 3 * S, 16 + k, 16 + k + S, 16 + k + 2 * S,
                                         16 + k + 3 * S, 0, 0, 0, 0, 0, 0, 0, 0);
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  }
  static V column(const float* row, int64_t next, int j) {  // F(2x2)'s column j
    switch (j) {
      case 0: return gather<2, 0>(row, next);
      case 1: return gather<2, 1>(row, next);
      case 2: return gather<2, 2>(row, next);
      default: return gather<2, 3>(row, next);
    }
  }
  template <int J>
  static V column4(const float* row, int64_t next) { return gather<4, J>(row, next); }

  // Shuffles of two vectors into two, by 128-bit quarters q0..q3:
  struct Pair {
    V lo, hi;
  };
  // in each quarter, a's and b's elements 0 and 1 interleaved (lo), 2 and 3 (hi)
  static Pair unpack32(V a, V b) {
    return {__builtin_shufflevector(a, b, 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29),
            __builtin_shufflevector(a, b, 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31)};
  }
  // in each quarter, a's and b's lower 64 bits (lo), upper 64 bits (hi)
  static Pair unpack64(V a, V b) {
    return {__builtin_shufflevector(a, b, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29),
            __builtin_shufflevector(a, b, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31)};
  }
  // a.q0 b.q0 a.q1 b.q1 (lo), a.q2 b.q2 a.q3 b.q3 (hi)
  static Pair quarters(V a, V b) {
    return {__builtin_shufflevector(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23),
            __builtin_shufflevector(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31)};
  }
  // a.q0 a.q1 b.q0 b.q1 (lo), a.q2 a.q3 b.q2 b.q3 (hi)
  static Pair halves(V a, V b) {
    return {__builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23),
            __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31)};
  }

  // Output row r of the step's tiles, F(4x4): yj[4i + t] is output (r, j) of tile t of tile row
  // i; its row goes to out + i * pitch, the first `width` values (<= 16) of [y0 y1 y2 y3 of tile
  // 0, ... of tile 3], for the first `tile_rows` tile rows (those inside the plane).
  static void store_quad_rows(float* out, int64_t pitch, int64_t tile_rows, int64_t width, V y0, V y1, V y2, V y3) {
    const Pair t01 = unpack32(y0, y1), t23 = unpack32(y2, y3);
    // tile t of every tile row i (in quarter i): r01.lo t = 0, r01.hi 1, r23.lo 2, r23.hi 3
    const Pair r01 = unpack64(t01.lo, t23.lo), r23 = unpack64(t01.hi, t23.hi);
    // tiles 0, 1 of tile rows 0, 1 (u01.lo) and 2, 3 (u01.hi); tiles 2, 3 likewise (u23)
    const Pair u01 = quarters(r01.lo, r01.hi), u23 = quarters(r23.lo, r23.hi);
    const Pair rows01 = halves(u01.lo, u23.lo), rows23 = halves(u01.hi, u23.hi);
    const V row[4] = {rows01.lo, rows01.hi, rows23.lo, rows23.hi};
    const __mmask16 mask = static_cast<__mmask16>((1u << width) - 1);
    for (int64_t i = 0; i < tile_rows; ++i) _mm512_mask_storeu_ps(out + i * pitch, mask, row[i]);
  }
  // The same for F(2x2): [y0 y1 of tile 0, ... of tile 3], the first `width` (<= 8) of them.
  static void store_pair_rows(float* out, int64_t pitch, int64_t tile_rows, int64_t width, V y0, V y1) {
    const Pair t = unpack32(y0, y1);
    const Pair rows = quarters(t.lo, t.hi);  // tile rows 0 and 1 (lo), 2 and 3 (hi), a half each
    typedef float H __attribute__((vector_size(32)));
    const H row[4] = {__builtin_shufflevector(rows.lo, rows.lo, 0, 1, 2, 3, 4, 5, 6, 7),
                      __builtin_shufflevector(rows.lo, rows.lo, 8, 9, 10, 11, 12, 13, 14, 15),
                      __builtin_shufflevector(rows.hi, rows.hi, 0, 1, 2, 3, 4, 5, 6, 7),
                      __builtin_shufflevector(rows.hi, rows.hi, 8, 9, 10, 11, 12, 13, 14, 15)};
    const __mmask8 mask = static_cast<__mmask8>((1u << width) - 1);
    for (int64_t i = 0; i < tile_rows; ++i) _mm256_mask_storeu_ps(out + i * pitch, mask, row[i]);
  }
};
#endif

// The widest lanes for T.
template <class T>
using LanesFor = std::conditional_t<std::is_same_v<T, float>, Float8Lanes, ScalarLanes<T>>;

}  // namespace
}  // namespace ember::kernels::cpu
