#pragma once
// How Winograd's forward (kernels/cpu/conv2d_winograd.cpp) walks a batch in vector steps: the
// forward's plan (ForwardPlan: the cut of the batch and V's and M's tap blocks), the input planes
// copied into a zero-bordered buffer, the steps over a padded plane's tiles (with the rows a tile
// shares with the one below carried down a column of tiles), and the steps over the output planes
// with their clipped writes. The transforms' arithmetic, per tile size, stays in the .cpp:
//
//   for_each_input_plane(g, p, images, count, padded, v, [&](const T* plane, T* out) {
//     for_each_tile_step<Lanes, 4, 4>(p, plane, out, gather_row, transform_tile);
//   });
//
// Only conv2d_winograd.cpp includes it: it is compiled with that file's flags, and everything
// here has internal linkage.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/conv_geometry.h"
#include "kernels/cpu/conv2d_winograd_lanes.h"
#include "kernels/cpu/conv2d_winograd_plan.h"
#include "kernels/cpu/copy_row.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/prefetch.h"

namespace ember::kernels::cpu {
namespace {

constexpr int64_t kTapSkew = kWinogradTapSkew;

// Slack after a buffer that a vector step may read past its end (Float8Lanes::column reads 18
// elements from a tile row's start, column4 36: the last row's step reads at most 30 past the
// padded plane).
constexpr int64_t kReadSlack = 32;

// The forward's cut of the batch, with its layout of V [16][C][columns] and M [16][OC][columns]:
// elements from one tap's block to the next.
struct ForwardPlan : WinogradPlan {
  int64_t v_tap, m_tap;
};

// Tiles per GEMM of the forward: half the weight gradient's F(2x2) groups, so that the batch is
// a dozen groups or more to deal to the threads (for_each_group_as_threads_free); one thread
// ran as fast at 96 as at 192 (ResNet-20 and ConvNet steps on a Zen 3, AVX2). Where a group's V
// and M would pass kForwardGroupBytes at 96, half as many: 48, one panel of the GEMM's widest
// tile. Measured on a Zen 5 (1 MiB of L2 a core) at two threads: ConvNet's 32-channel 28x28 and
// 64-channel 14x14 layers (864 KiB and 1.7 MiB at 96) 5-12% faster at 48, ResNet-20's 32-channel
// 14x14 and 64-channel 7x7 ones (864 and 768 KiB) mostly faster, its 16-channel 28x28 one (432
// KiB: it keeps 96) 1-15% slower at 48 (docs/kernels.md). The bytes are f32's; f64 (gradcheck)
// takes the same columns.
constexpr int64_t kForwardColumnsWanted = 96;
constexpr int64_t kForwardColumnsNarrow = 48;
constexpr int64_t kForwardGroupBytes = 512 * 1024;

int64_t forward_columns_wanted(const Conv2dGeometry& g, int64_t tile) {
  const int64_t taps = (tile + 2) * (tile + 2);
  const int64_t bytes = taps * (g.in_channels + g.out_channels) * kForwardColumnsWanted * int64_t(sizeof(float));
  return bytes <= kForwardGroupBytes ? kForwardColumnsWanted : kForwardColumnsNarrow;
}

ForwardPlan plan_for(const Conv2dGeometry& g, int64_t tile) {
  ForwardPlan p{winograd_plan(g, tile, forward_columns_wanted(g, tile)), 0, 0};
  p.v_tap = g.in_channels * p.columns + kTapSkew;
  p.m_tap = g.out_channels * p.columns + kTapSkew;
  return p;
}

// The length of a row buffer for one row of tiles: m values per tile, plus a vector step's overrun.
int64_t row_buffer(const ForwardPlan& p) { return p.tile * p.tiles_w + kReadSlack; }

// Whether Lanes holds four whole rows of tiles a step (Float16Quads).
template <class Lanes>
inline constexpr bool kQuadRows = false;
#if EMBER_WINOGRAD_QUAD_ROWS
template <>
inline constexpr bool kQuadRows<Float16Quads> = true;
#endif

// Rows of tiles the vector step at tile row th holds: Float16Quads::rows, two where a plane is
// four tiles wide, the vector eight and a row th + 1 exists (pair_rows), one otherwise.
template <class Lanes>
int64_t step_rows(const ForwardPlan& p, int64_t th) {
  if constexpr (kQuadRows<Lanes>) return Lanes::rows;
  return Lanes::width == 8 && p.tiles_w == 4 && th + 1 < p.tiles_h ? 2 : 1;
}
template <class Lanes>
bool pair_rows(const ForwardPlan& p, int64_t th) {
  return step_rows<Lanes>(p, th) > 1;
}

// Whether the forward's steps take Float16Quads for this plan: f32, AVX-512 in the build and
// chosen at run time (EMBER_CPU_ISA=avx2 keeps the eight-wide steps), planes four tiles wide
// whose rows of tiles come in fours.
template <class T>
bool quad_rows_apply(const ForwardPlan& p) {
#if EMBER_WINOGRAD_QUAD_ROWS
  return std::is_same_v<T, float> && cpu_isa() == CpuIsa::avx512 && p.tiles_w == 4 && p.tiles_h % 4 == 0;
#else
  (void)p;
  return false;
#endif
}

// Calls plane_fn(padded, o) for every input plane: its values copied into `padded` (p.padded_h x
// p.padded_w, zero outside the plane: the caller zeroes it once, and the copies only ever write
// its interior, so no tile needs a bounds check), o the plane's first column of V's row for its
// channel.
template <class T, class Plane>
void for_each_input_plane(const Conv2dGeometry& g, const ForwardPlan& p, const T* images, int64_t count, T* padded,
                          T* v, const Plane& plane_fn) {
  const int64_t c_count = g.in_channels, h = g.in_h, w = g.in_w, pw = p.padded_w;
  for (int64_t c = 0; c < c_count; ++c)
    for (int64_t image = 0; image < count; ++image) {
      const T* plane = images + (image * c_count + c) * h * w;
      // the next plane this loop copies, fetched while this one is transformed
      const int64_t next = image + 1 < count ? (image + 1) * c_count + c : c + 1;
      if (next < count * c_count) prefetch_range(images + next * h * w, h * w);
      for (int64_t row = 0; row < h; ++row)
        copy_row(plane + row * w, w, padded + (row + g.pad_h) * pw + g.pad_w);
      plane_fn(static_cast<const T*>(padded), v + c * p.columns + image * p.tiles);
    }
}

// Calls step(d0, next, o) for every vector step over the tiles of a padded plane, row of tiles
// by row of tiles: d0 is the step's first tile's top-left input, next where the upper lanes'
// inputs start (pair_rows) and o the step's first column of V's row (out: the plane's first).
template <class Lanes, class T, class Step>
void for_each_input_step(const ForwardPlan& p, const T* padded, T* out, const Step& step) {
  const int64_t pw = p.padded_w, m = p.tile;
  for (int64_t th = 0; th < p.tiles_h; th += step_rows<Lanes>(p, th))
    for (int64_t tw = 0; tw < p.tiles_w; tw += Lanes::width)
      step(padded + m * (th * pw + tw), pair_rows<Lanes>(p, th) ? m * pw : 4 * m, out + th * p.tiles_w + tw);
}

// Calls tile(x, o) for every vector step over the tiles of a padded plane: x[r] = row(the step's
// tiles' input row r, next) for r < Rows (Width vectors each), o the step's first column of V's
// row. A tile's last two input rows are the first two of the tile below it, so where no vector
// pairs rows of tiles the steps run down each column of tiles and carry those two rows to the
// next step (each input row is read and transformed once: the gathers were most of the
// transforms' work). Columns of steps run from the last to the first: a step past a row's last
// tile writes the first tiles of the row below, which the first column's steps then write again.
template <class Lanes, int Rows, int Width, class T, class Row, class Tile>
void for_each_tile_step(const ForwardPlan& p, const T* plane, T* out, const Row& row, const Tile& tile) {
  typename Lanes::V x[Rows][Width];
  const int64_t pw = p.padded_w;
  if (pair_rows<Lanes>(p, 0)) {
    for_each_input_step<Lanes>(p, plane, out, [&](const T* d0, int64_t next, T* o) {
      for (int r = 0; r < Rows; ++r) row(d0 + r * pw, next, x[r]);
      tile(x, o);
    });
    return;
  }
  const int64_t next = 4 * p.tile;  // the upper lanes' tiles are the row's next four (pair_rows)
  for (int64_t tw = (p.tiles_w - 1) / Lanes::width * Lanes::width; tw >= 0; tw -= Lanes::width) {
    const T* d0 = plane + p.tile * tw;
    row(d0, next, x[0]);
    row(d0 + pw, next, x[1]);
    for (int64_t th = 0; th < p.tiles_h; ++th) {
      const T* rows = d0 + p.tile * th * pw;
      for (int r = 2; r < Rows; ++r) row(rows + r * pw, next, x[r]);
      tile(x, out + th * p.tiles_w + tw);
      for (int j = 0; j < Width; ++j) {
        x[0][j] = x[Rows - 2][j];
        x[1][j] = x[Rows - 1][j];
      }
    }
  }
}

// Calls plane_fn(plane, in, b) for every output plane of a group of `count` images: plane its
// first element, in the first column of M's row for its channel and image, b the bias as a
// vector. The next plane is fetched for writing while this one is written (stores into lines not
// in cache stalled the row copies of for_each_output_step: 10% of the forward's transforms).
template <class Lanes, class T, class PlaneFn>
void for_each_output_plane(const Conv2dGeometry& g, const ForwardPlan& p, const T* m, const T* bias, int64_t count,
                           T* out_images, const PlaneFn& plane_fn) {
  using V = typename Lanes::V;
  const int64_t oc_count = g.out_channels, plane_size = g.out_h * g.out_w;
  for (int64_t image = 0; image < count; ++image)
    for (int64_t oc = 0; oc < oc_count; ++oc) {
      T* plane = out_images + (image * oc_count + oc) * plane_size;
      if (image * oc_count + oc + 1 < count * oc_count) prefetch_range(plane + plane_size, plane_size, true);
      plane_fn(plane, static_cast<const T*>(m + oc * p.columns + image * p.tiles), V{} + (bias != nullptr ? bias[oc] : T(0)));
    }
}

// Calls step(t, rows, tw, b) for every vector step over the tiles of every output plane: t is
// the step's first column of M's row for that channel, rows the m output rows that step writes
// the tiles' outputs into, from element m * tw (with pair_rows, the second tile row's from
// element 4m on), and b the bias as a vector.
// A step writes whole vectors, so it may write up to `overrun` elements past a row's end. Where
// that lands on elements written again afterwards, the tile row is written straight into the
// plane: its steps run from the row's last to its first (whose stores, m x width elements from
// each row's start, cover what the one before spilled into the next row), and the plane's rows
// below it hold what its last row spills. Elsewhere (paired rows, a tile row cut off at the
// bottom, the last rows of the plane) the steps write the m row buffers `wide` (row_buffer(p)
// each) and the rows are copied, clipped, into the plane. (The copies were ~10% of the
// forward's transforms.)
template <class Lanes, class T, class Step>
void for_each_output_step(const Conv2dGeometry& g, const ForwardPlan& p, const T* m, const T* bias, int64_t count,
                          T* rows, T* out_images, const Step& step) {
  using V = typename Lanes::V;
  const int64_t oh_count = g.out_h, ow_count = g.out_w, tile = p.tile;
  const int64_t steps = (p.tiles_w + Lanes::width - 1) / Lanes::width;
  const int64_t overrun = tile * Lanes::width * steps - ow_count;
  T* wide[4];
  for (int64_t i = 0; i < tile; ++i) wide[i] = rows + i * row_buffer(p);
  for_each_output_plane<Lanes>(g, p, m, bias, count, out_images, [&](T* plane, const T* in, V b) {
    for (int64_t th = 0; th < p.tiles_h;) {
      const bool paired = pair_rows<Lanes>(p, th);
      const int64_t below = oh_count - tile * (th + 1);  // the plane's rows under this tile row
      if (!paired && below >= 0 && below * ow_count >= overrun) {
        T* direct[4];
        for (int64_t i = 0; i < tile; ++i) direct[i] = plane + (tile * th + i) * ow_count;
        for (int64_t s = steps - 1; s >= 0; --s)
          step(in + th * p.tiles_w + s * Lanes::width, direct, s * Lanes::width, b);
        ++th;
        continue;
      }
      const int64_t tile_rows = paired ? 2 : 1;
      for (int64_t tw = 0; tw < p.tiles_w; tw += Lanes::width) step(in + th * p.tiles_w + tw, wide, tw, b);
      for (int64_t r = 0; r < tile_rows; ++r, ++th)
        for (int64_t i = 0; i < tile && tile * th + i < oh_count; ++i)
          copy_row(wide[i] + 4 * tile * r, ow_count, plane + (tile * th + i) * ow_count);
    }
  });
}

// Calls step(t, out, rows_left, b) for every step of four whole rows of tiles (Float16Quads) over
// every output plane: t the step's first column of M's row for that channel, out the plane's row
// where the step's first tile row starts, rows_left the plane's rows from there on (the last
// step's tiles may reach below the plane) and b the bias as a vector. The steps store each
// output row straight into the plane, clipped (Float16Quads::store_quad_rows).
template <class Lanes, class T, class Step>
void for_each_output_quad(const Conv2dGeometry& g, const ForwardPlan& p, const T* m, const T* bias, int64_t count,
                          T* out_images, const Step& step) {
  using V = typename Lanes::V;
  const int64_t oh_count = g.out_h, ow_count = g.out_w, tile = p.tile;
  for_each_output_plane<Lanes>(g, p, m, bias, count, out_images, [&](T* plane, const T* in, V b) {
    for (int64_t th = 0; th < p.tiles_h; th += Lanes::rows)
      step(in + th * p.tiles_w, plane + tile * th * ow_count, oh_count - tile * th, b);
  });
}

// Of a step's four rows of tiles, how many have their output row r inside the plane, rows_left
// rows being left from the step's first (for_each_output_quad).
inline int64_t tile_rows_inside(int64_t rows_left, int64_t r, int64_t tile) {
  return std::clamp<int64_t>((rows_left - r + tile - 1) / tile, 0, 4);
}

}  // namespace
}  // namespace ember::kernels::cpu
