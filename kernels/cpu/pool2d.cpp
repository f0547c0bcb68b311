// CPU max and average pooling over NCHW planes, forward and backward. Every
// (n, c) plane is independent, so planes are spread over OpenMP threads; within a
// plane the windows come from kernels/conv_geometry.h's pool_window (shared with
// CUDA). Max pooling keeps no indices: forward writes only y, and backward
// recomputes each window's argmax from x with kernels/pool_math.h's window_argmax
// (the same rule as forward and CUDA), then scatters dy there. A plane is walked
// serially, outputs in (oh, ow) order, so overlapping windows that share a maximum
// add their gradients in a fixed order; threads never write the same plane.
#include <algorithm>
#include <type_traits>

#include "kernels/cpu/max_pool_lanes.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"
#include "kernels/pool_math.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

#include "kernels/backend_api.inc"

namespace {

// Planes per task: enough work per thread that small pools run inline.
int64_t plane_grain(int64_t plane_work) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, plane_work)); }


// The argmax of every window of output row oh of one plane (kernels/pool_math.h). Outputs whose
// window lies inside the plane's columns take a fixed-size form when the window is 2x2 (nearly
// every CNN's pooling): the same function with constant bounds, which the compiler unrolls into
// straight-line selects. Border outputs and other sizes take pool_argmax. Both visit a window
// the same way, so they pick the same element.
template <class T>
class RowArgmax {
 public:
  using C = compute_t<T>;

  RowArgmax(const Conv2dGeometry& g, const T* plane, int64_t oh)
      : g_(g), plane_(plane), oh_(oh), wh_(pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h)) {
    lo_ = std::min(g.out_w, (g.pad_w + g.stride_w - 1) / g.stride_w);
    hi_ = g.in_w + g.pad_w >= g.kernel_w
              ? std::clamp<int64_t>((g.in_w + g.pad_w - g.kernel_w) / g.stride_w + 1, lo_, g.out_w)
              : lo_;
    fixed_ = wh_.end - wh_.begin == 2 && g.kernel_w == 2;  // rows are non-empty: padding <= kernel/2
  }

  PoolArgmax<C> operator()(int64_t ow) const {
    if (fixed_ && ow >= lo_ && ow < hi_) {
      const int64_t w0 = ow * g_.stride_w - g_.pad_w;
      return window_argmax<C>(plane_, g_.in_w, wh_.begin, wh_.begin + 2, w0, w0 + 2);
    }
    return pool_argmax<C>(g_, plane_, oh_, ow);
  }

 private:
  const Conv2dGeometry& g_;
  const T* plane_;
  int64_t oh_;
  PoolWindow wh_;
  int64_t lo_ = 0, hi_ = 0;
  bool fixed_ = false;
};

// Windows of 2x2, stride 2, no padding (nearly every CNN's pooling) never overlap: each input
// element lies in at most one window, so backward can write every element exactly once, and
// both directions take a form whose loop over windows vectorises (argmax_of_four). Every window
// must lie inside the plane (ceil_mode's last one may hang past an odd edge).
bool disjoint_2x2(const Conv2dGeometry& g) {
  return g.kernel_h == 2 && g.kernel_w == 2 && g.stride_h == 2 && g.stride_w == 2 && g.pad_h == 0 && g.pad_w == 0 &&
         2 * g.out_h <= g.in_h && 2 * g.out_w <= g.in_w;
}

// Which of a window's four elements a, b, c, d (row by row) is its maximum, 0..3, and its
// value, compared with a plain `>`: selects the compiler vectorises across windows. Without a
// NaN in the window it is exactly pool_math.h's rule; a row of windows that holds a NaN is
// redone with window_argmax (the first NaN wins), as window_argmax itself does per window.
template <class C>
inline int argmax_of_four(C a, C b, C c, C d, C& best) {
  // The index is chosen with masks, not `?:` (which GCC turns into branches that random data
  // mispredicts half the time); the value with max instructions.
  best = a;
  int at = 0;
  int take = -static_cast<int>(b > best);
  at = (1 & take) | (at & ~take);
  best = b > best ? b : best;
  take = -static_cast<int>(c > best);
  at = (2 & take) | (at & ~take);
  best = c > best ? c : best;
  take = -static_cast<int>(d > best);
  at = (3 & take) | (at & ~take);
  best = d > best ? d : best;
  return at;
}

// Calls step(windows, ow) for a row of disjoint 2x2 windows of f32 (rows r0 and r1 of the
// input), windows ow .. ow + 7, eight at a time: the last eight end at the row's last window,
// overlapping the group before them (each window's results are written again, the same). A row
// of fewer than eight windows is one group that reads and writes past the row's end: the caller
// takes that path only where the reads stay in the plane and the writes land on elements
// written again afterwards (the rows below; eight_windows_fit). Returns whether a window held a
// NaN. (The compiler vectorised the scalar loops 16 windows at a time, so ConvNet's rows of 14
// and 7 windows ran scalar; the backward's scatter never vectorised: pooling was 8% of its step.)
template <class Step>
bool for_each_eight_windows(const float* r0, const float* r1, int64_t out_w, const Step& step) {
  bool nans = false;
  for (int64_t ow = 0;; ow += MaxPool8::width) {
    ow = std::max<int64_t>(0, std::min(ow, out_w - MaxPool8::width));
    const MaxPool8 windows = MaxPool8::of(r0 + 2 * ow, r1 + 2 * ow);
    nans |= windows.any_nan();
    step(windows, ow);
    if (ow + MaxPool8::width >= out_w) return nans;
  }
}

// Whether window row oh of a plane runs eight windows at a time: a row of at least eight, or a
// shorter one whose group stays in the plane: 16 floats from input rows 2 oh and 2 oh + 1
// (read, and backward's dx written), eight of output row oh (y written, backward's dy read).
inline bool eight_windows_fit(const Conv2dGeometry& g, int64_t oh) {
  return g.out_w >= MaxPool8::width || ((2 * oh + 1) * g.in_w + 2 * MaxPool8::width <= g.in_h * g.in_w &&
                                        oh * g.out_w + MaxPool8::width <= g.out_h * g.out_w);
}

// max_pool2d of one plane with disjoint 2x2 windows.
template <class T>
void max_pool2d_2x2(const Conv2dGeometry& g, const T* in, T* out) {
  using C = compute_t<T>;
  const int64_t w = g.in_w;
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const T* r0 = in + 2 * oh * w;
    const T* r1 = r0 + w;
    T* y = out + oh * g.out_w;
    int nans = 0;
    if (std::is_same_v<T, float> && eight_windows_fit(g, oh)) {
      if constexpr (std::is_same_v<T, float>)
        nans = for_each_eight_windows(r0, r1, g.out_w, [&](const MaxPool8& windows, int64_t ow) {
          MaxPool8::store(y + ow, windows.best);
        });
    } else {
#pragma omp simd reduction(| : nans)
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const C a = C(r0[2 * ow]), b = C(r0[2 * ow + 1]), c = C(r1[2 * ow]), d = C(r1[2 * ow + 1]);
        nans |= (a != a) | (b != b) | (c != c) | (d != d);
        C best;
        argmax_of_four(a, b, c, d, best);
        y[ow] = T(best);
      }
    }
    if (nans)
      for (int64_t ow = 0; ow < g.out_w; ++ow) y[ow] = T(window_argmax<C>(in, w, 2 * oh, 2 * oh + 2, 2 * ow, 2 * ow + 2).value);
  }
}

// max_pool2d_backward of one plane with disjoint 2x2 windows: no read-modify-write scatter, and
// the rows and columns no window covers are zeroed (after the windows' stores, so what a row's
// eight windows spill there is cleared). f32 writes each window's four elements (dy at its
// argmax, zero elsewhere) eight windows at a time; otherwise (and where eight would spill out of
// the plane) the two input rows under a row of windows are zeroed (in L1, one vector fill), then
// dy is stored once at each argmax.
template <class T>
void max_pool2d_backward_2x2(const Conv2dGeometry& g, const T* in, const T* grad, T* dst) {
  using C = compute_t<T>;
  const int64_t w = g.in_w, covered = 2 * g.out_w;
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const T* r0 = in + 2 * oh * w;
    const T* r1 = r0 + w;
    T* d0 = dst + 2 * oh * w;
    T* d1 = d0 + w;
    const T* dy = grad + oh * g.out_w;
    int nans = 0;
    if (std::is_same_v<T, float> && eight_windows_fit(g, oh)) {
      if constexpr (std::is_same_v<T, float>)
        nans = for_each_eight_windows(r0, r1, g.out_w, [&](const MaxPool8& windows, int64_t ow) {
          windows.spread(dy + ow, d0 + 2 * ow, d1 + 2 * ow);
        });
      std::fill(d0 + covered, d0 + w, T(0));
      std::fill(d1 + covered, d1 + w, T(0));
    } else {
      std::fill(d0, d0 + 2 * w, T(0));
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const C a = C(r0[2 * ow]), b = C(r0[2 * ow + 1]), c = C(r1[2 * ow]), d = C(r1[2 * ow + 1]);
        nans |= (a != a) | (b != b) | (c != c) | (d != d);
        C best;
        const int at = argmax_of_four(a, b, c, d, best);
        d0[2 * ow + (at >> 1) * w + (at & 1)] = dy[ow];
      }
    }
    if (nans) {
      std::fill(d0, d0 + 2 * w, T(0));
      for (int64_t ow = 0; ow < g.out_w; ++ow) dst[window_argmax<C>(in, w, 2 * oh, 2 * oh + 2, 2 * ow, 2 * ow + 2).at] = dy[ow];
    }
  }
  std::fill(dst + 2 * g.out_h * w, dst + g.in_h * w, T(0));
}

}  // namespace

void max_pool2d(const Tensor& x, const Conv2dGeometry& g, const Tensor& y) {
  const int64_t planes = g.batch * g.in_channels, in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  dispatch_floating("max_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    parallel_for(planes, plane_grain(in_plane), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        if (disjoint_2x2(g)) {
          max_pool2d_2x2(g, in + p * in_plane, out + p * out_plane);
          continue;
        }
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const RowArgmax<T> argmax(g, in + p * in_plane, oh);
          T* dst = out + p * out_plane + oh * g.out_w;
          for (int64_t ow = 0; ow < g.out_w; ++ow) dst[ow] = T(argmax(ow).value);
        }
      }
    });
  });
}

void max_pool2d_backward(const Tensor& dy, const Tensor& x, const Conv2dGeometry& g, const Tensor& dx) {
  const int64_t planes = g.batch * g.in_channels, in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  dispatch_floating("max_pool2d_backward", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* in = x.data<T>();
    const T* grad = dy.data<T>();
    T* out = dx.data<T>();
    parallel_for(planes, plane_grain(in_plane + out_plane), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        T* dst = out + p * in_plane;
        if (disjoint_2x2(g)) {
          max_pool2d_backward_2x2(g, in + p * in_plane, grad + p * out_plane, dst);
          continue;
        }
        std::fill(dst, dst + in_plane, T(0));
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const RowArgmax<T> argmax(g, in + p * in_plane, oh);
          const T* src = grad + p * out_plane + oh * g.out_w;
          // Each add rounds to T, as a scatter into dx must (f16: once per contribution).
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const int64_t at = argmax(ow).at;
            dst[at] = T(C(dst[at]) + C(src[ow]));
          }
        }
      }
    });
  });
}

void avg_pool2d(const Tensor& x, const Conv2dGeometry& g, bool count_include_pad, const Tensor& y) {
  const int64_t planes = g.batch * g.in_channels, in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  dispatch_floating("avg_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    parallel_for(planes, plane_grain(in_plane), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const T* src = in + p * in_plane;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const PoolWindow wh = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const PoolWindow ww = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
            C sum = C(0);
            for (int64_t h = wh.begin; h < wh.end; ++h)
              for (int64_t w = ww.begin; w < ww.end; ++w) sum += C(src[h * g.in_w + w]);
            out[p * out_plane + oh * g.out_w + ow] = T(sum / C(pool_divisor(wh, ww, count_include_pad)));
          }
        }
      }
    });
  });
}

void avg_pool2d_backward(const Tensor& dy, const Conv2dGeometry& g, bool count_include_pad, const Tensor& dx) {
  const int64_t planes = g.batch * g.in_channels, in_plane = g.in_plane(), out_plane = g.out_h * g.out_w;
  dispatch_floating("avg_pool2d_backward", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* grad = dy.data<T>();
    T* out = dx.data<T>();
    parallel_for(planes, plane_grain(in_plane + out_plane), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        T* dst = out + p * in_plane;
        std::fill(dst, dst + in_plane, T(0));
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const PoolWindow wh = pool_window(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const PoolWindow ww = pool_window(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
            const C share = C(grad[p * out_plane + oh * g.out_w + ow]) / C(pool_divisor(wh, ww, count_include_pad));
            for (int64_t h = wh.begin; h < wh.end; ++h)
              for (int64_t w = ww.begin; w < ww.end; ++w) dst[h * g.in_w + w] = T(C(dst[h * g.in_w + w]) + share);
          }
        }
      }
    });
  });
}

}  // namespace ember::kernels::cpu
