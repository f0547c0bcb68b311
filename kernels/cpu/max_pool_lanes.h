#pragma once
// Max pooling's disjoint 2x2 windows eight at a time (kernels/cpu/pool2d.cpp), the lanes of one
// 8-float vector being eight consecutive windows of a row (GCC and Clang vector extensions,
// compiled for this machine's widest unit):
//
//   const MaxPool8 w = MaxPool8::of(r0 + 2 * ow, r1 + 2 * ow);  // windows ow .. ow + 7 of rows r0, r1
//   MaxPool8::store(y + ow, w.best);                              // each window's maximum
//   w.spread(dy + ow, d0 + 2 * ow, d1 + 2 * ow);                  // dy at each argmax, zero elsewhere
//
// The verdicts are kernels/pool_math.h's for windows without a NaN: an element takes over from
// the maximum before it (row by row) only when strictly greater, so ties keep the first. A window
// holding a NaN sets its lane of `nan`; the caller redoes that row with window_argmax (the first
// NaN wins), as pool2d.cpp's scalar loops do. Only pool2d.cpp includes it; everything here has
// internal linkage.
#include <cstdint>
#include <cstring>

namespace ember::kernels::cpu {
namespace {

struct MaxPool8 {
  typedef float V __attribute__((vector_size(32)));
  typedef int32_t M __attribute__((vector_size(32)));  // a compare's lanes: all ones or zero
  static constexpr int64_t width = 8;

  V best;                        // each window's maximum
  M take_b, take_c, take_d, nan;  // which element took over last (a: none did); which hold a NaN

  static V load(const float* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, V v) { std::memcpy(p, &v, sizeof v); }
  static V select(M m, V x, V y) { return (V)(((M)x & m) | ((M)y & ~m)); }

  // Windows ow .. ow + 7 from r0 = row 2 oh + 2 ow and r1 = row 2 oh + 1 + 2 ow (16 floats each).
  static MaxPool8 of(const float* r0, const float* r1) {
    const V lo0 = load(r0), hi0 = load(r0 + 8), lo1 = load(r1), hi1 = load(r1 + 8);
    const V a = __builtin_shufflevector(lo0, hi0, 0, 2, 4, 6, 8, 10, 12, 14);
    const V b = __builtin_shufflevector(lo0, hi0, 1, 3, 5, 7, 9, 11, 13, 15);
    const V c = __builtin_shufflevector(lo1, hi1, 0, 2, 4, 6, 8, 10, 12, 14);
    const V d = __builtin_shufflevector(lo1, hi1, 1, 3, 5, 7, 9, 11, 13, 15);
    MaxPool8 w;
    w.nan = (a != a) | (b != b) | (c != c) | (d != d);
    w.take_b = b > a;
    V running = select(w.take_b, b, a);
    w.take_c = c > running;
    running = select(w.take_c, c, running);
    w.take_d = d > running;
    w.best = select(w.take_d, d, running);
    return w;
  }

  bool any_nan() const {
    for (int i = 0; i < width; ++i)
      if (nan[i] != 0) return true;
    return false;
  }

  // dy[t] at window t's argmax and +0 at its other three elements: 16 floats of each row.
  void spread(const float* dy, float* d0, float* d1) const {
    const M g = (M)load(dy), neither_c_nor_d = ~take_c & ~take_d;
    const V e0 = (V)(g & ~take_b & neither_c_nor_d), e1 = (V)(g & take_b & neither_c_nor_d);
    const V e2 = (V)(g & take_c & ~take_d), e3 = (V)(g & take_d);
    store(d0, __builtin_shufflevector(e0, e1, 0, 8, 1, 9, 2, 10, 3, 11));
    store(d0 + 8, __builtin_shufflevector(e0, e1, 4, 12, 5, 13, 6, 14, 7, 15));
    store(d1, __builtin_shufflevector(e2, e3, 0, 8, 1, 9, 2, 10, 3, 11));
    store(d1 + 8, __builtin_shufflevector(e2, e3, 4, 12, 5, 13, 6, 14, 7, 15));
  }
};

}  // namespace
}  // namespace ember::kernels::cpu
