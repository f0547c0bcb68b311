#pragma once
// How Winograd's forward tile transforms (kernels/cpu/conv2d_winograd.cpp) run over a row of
// tiles several tiles at a time, the lanes of one vector being consecutive tiles:
//
//   using Lanes = LanesFor<float>;                       // Float8Lanes: eight tiles a vector
//   const Lanes::V x = Lanes::column(row, 8, j);         // column j of the eight tiles at row
//   Lanes::store_pairs(out, even, odd);                  // out[2t] = even[t], out[2t + 1] = odd[t]
//
// Only conv2d_winograd.cpp includes it: it is compiled with that file's flags, and everything
// here has internal linkage.
#include <cstdint>
#include <cstring>
#include <type_traits>

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

// The widest lanes for T.
template <class T>
using LanesFor = std::conditional_t<std::is_same_v<T, float>, Float8Lanes, ScalarLanes<T>>;

}  // namespace
}  // namespace ember::kernels::cpu
