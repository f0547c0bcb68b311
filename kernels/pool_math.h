#pragma once
// Max pooling's argmax, shared by the CPU and CUDA backends so that forward,
// backward and both devices pick the same element of every window. Max pooling
// keeps no indices: forward writes only y, and backward recomputes each output's
// argmax from x with pool_argmax and routes dy there.
//
// The rule (the one max pooling always had, PyTorch's): a window is visited row by
// row, left to right, starting from its first element; an element replaces the
// running maximum iff it is strictly greater (ties keep the first) or it is a NaN
// and the maximum is not (the first NaN wins: kernels/softmax_math.h's max_takes).
// Padding never wins: the window is clamped to the plane (pool_window), and
// pool2d_geometry's padding <= kernel/2 keeps every clamped window non-empty.
//
//   const PoolArgmax<C> m = pool_argmax<C>(g, x_plane, oh, ow);  // m.value, m.at = h * W + w
#include <cstdint>

#include "core/hd.h"
#include "kernels/conv_geometry.h"

namespace ember::kernels {

// The maximum of a window (in the compute type C) and its flat offset h * W + w in the plane.
template <class C>
struct PoolArgmax {
  C value;
  int64_t at;
};

// Whether v replaces the running maximum `best`: strictly greater, or a NaN over a number
// (kernels/softmax_math.h's max_takes, written with bitwise operators: no short-circuit).
template <class C>
EMBER_HD bool pool_takes(C v, C best) {
  return (v > best) | ((v != v) & (best == best));
}

// The argmax of rows [h_begin, h_end) x columns [w_begin, w_end) (non-empty) of one plane of
// width in_w. T is the storage type (float, double, ember::Half on the CPU, __half on CUDA);
// elements are compared as C. The common pass compares with a plain `>`, which the CPU compiles
// to selects (pool_takes' NaN test makes GCC branch on data-dependent compares, 3x slower on
// random inputs); without a NaN in the window it is exactly pool_takes' verdict. A window that
// holds a NaN is walked again with pool_takes, so the first NaN wins.
template <class C, class T>
EMBER_HD PoolArgmax<C> window_argmax(const T* plane, int64_t in_w, int64_t h_begin, int64_t h_end, int64_t w_begin,
                                     int64_t w_end) {
  const int64_t first = h_begin * in_w + w_begin;
  int64_t best_at = first;
  C best = C(plane[first]);
  bool has_nan = false;
  for (int64_t h = h_begin; h < h_end; ++h)
    for (int64_t w = w_begin; w < w_end; ++w) {
      const int64_t at = h * in_w + w;
      const C v = C(plane[at]);
      has_nan |= v != v;
      const int64_t take = -static_cast<int64_t>(v > best);  // all ones or zero: a mask, not a branch
      best = v > best ? v : best;                             // a max instruction
      best_at = (at & take) | (best_at & ~take);
    }
  if (has_nan) {
    best_at = first;
    best = C(plane[first]);
    for (int64_t h = h_begin; h < h_end; ++h)
      for (int64_t w = w_begin; w < w_end; ++w) {
        const int64_t at = h * in_w + w;
        const C v = C(plane[at]);
        if (pool_takes(v, best)) {
          best = v;
          best_at = at;
        }
      }
  }
  return PoolArgmax<C>{best, best_at};
}

// Output (oh, ow) of max pooling with geometry g (pool2d_geometry) over one input plane.
template <class C, class T>
EMBER_HD PoolArgmax<C> pool_argmax(const Conv2dGeometry& g, const T* plane, int64_t oh, int64_t ow) {
  const PoolWindow wh = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
  const PoolWindow ww = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
  return window_argmax<C>(plane, g.in_w, wh.begin, wh.end, ww.begin, ww.end);
}

}  // namespace ember::kernels
