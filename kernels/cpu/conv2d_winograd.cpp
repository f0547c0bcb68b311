// Winograd F(2x2, 3x3) and F(4x4, 3x3) on the CPU; the method and its error are in
// conv2d_winograd.h. Layout, with taps = 16 (F(2x2)) or 36 (F(4x4)): U [taps][OC][C] (all
// kernels, once per call), and per thread V [taps][C][cols] and M [taps][OC][cols], where a
// column is one 4x4 (6x6) tile of one image of the thread's current group of images (kernels/cpu/conv2d_winograd_plan.h). Each U[k] is packed once per call for
// the GEMM (cpu::PackedA) and serves every group. The batch is cut into groups, dealt to the
// threads as each comes free (one OpenMP team for the op; each image's output is the same
// whichever thread runs it); the GEMMs (kernels/cpu/gemm.h) inside run single-threaded. The tile
// transforms' vectors of tiles are conv2d_winograd_lanes.h, their walks over the planes
// conv2d_winograd_steps.h; the weight gradient is conv2d_winograd_weight_grad.cpp.
#include "kernels/cpu/conv2d_winograd.h"
#include "kernels/cpu/conv2d_winograd_f4.h"
#include "kernels/cpu/conv2d_winograd_lanes.h"
#include "kernels/cpu/conv2d_winograd_plan.h"
#include "kernels/cpu/conv2d_winograd_steps.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/simulation.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/transpose_block.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels::cpu {
namespace {

constexpr int64_t kMinChannels = 16;  // below this (a first layer), im2col's one GEMM wins

// Runs transform(kernel, taps) for each kernel g = weight[oc][c] (taps: its Taps values) and
// stores U[k][oc][c]. One output channel's kernels are transformed into `row` [C][taps] first
// and then written a tap at a time, C values in a row: storing each kernel's taps straight into
// U would write taps blocks OC * C apart, for 64 channels 16 KiB apart, all in one L1 set
// (F(4x4)'s 36 blocks ran ResNet-20's kernel transforms at 13% of its step).
template <int Taps, class T, class Transform>
void transform_kernels_by_rows(const Conv2dGeometry& g, const T* weight, T* u, const Transform& transform) {
  const int64_t oc_count = g.out_channels, c_count = g.in_channels, stride = oc_count * c_count;
  parallel_for(oc_count, std::max<int64_t>(1, kParallelGrain / (c_count * Taps)), [&](int64_t o0, int64_t o1) {
    std::vector<T> row(static_cast<size_t>(c_count * Taps));
    for (int64_t oc = o0; oc < o1; ++oc) {
      for (int64_t c = 0; c < c_count; ++c) transform(weight + (oc * c_count + c) * 9, row.data() + c * Taps);
      // row [C][Taps] transposed into U's rows, 8 x 8 blocks in registers (a scalar gather ran
      // ResNet-20's kernel transforms at 0.4% of its step, serial where the layer is narrow)
      T* out = u + oc * c_count;
      int64_t c8 = 0, k8 = 0;
      for (; c8 + 8 <= c_count; c8 += 8)
        for (k8 = 0; k8 + 8 <= Taps; k8 += 8) transpose_block<8>(row.data() + c8 * Taps + k8, Taps, out + k8 * stride + c8, stride);
      for (int64_t k = 0; k < Taps; ++k)  // what the blocks left: channels from c8 on, taps from k8 on
        for (int64_t c = k < k8 ? c8 : 0; c < c_count; ++c) out[k * stride + c] = row[static_cast<size_t>(c * Taps + k)];
    }
  });
}

// U[k][oc][c] = (G g G^T)[k] for every kernel g = weight[oc][c].
template <class T>
void transform_kernels(const Conv2dGeometry& g, const T* weight, T* u) {
  transform_kernels_by_rows<16>(g, weight, u, [](const T* k, T* out) {
    T r[4][3];  // G g
    for (int j = 0; j < 3; ++j) {
      r[0][j] = k[j];
      r[1][j] = T(0.5) * (k[j] + k[3 + j] + k[6 + j]);
      r[2][j] = T(0.5) * (k[j] - k[3 + j] + k[6 + j]);
      r[3][j] = k[6 + j];
    }
    for (int i = 0; i < 4; ++i) {  // (G g) G^T
      out[4 * i + 0] = r[i][0];
      out[4 * i + 1] = T(0.5) * (r[i][0] + r[i][1] + r[i][2]);
      out[4 * i + 2] = T(0.5) * (r[i][0] - r[i][1] + r[i][2]);
      out[4 * i + 3] = r[i][2];
    }
  });
}

// F(4x4): U[k][oc][c] = (G g G^T)[k], k = 6a + b, for every kernel g = weight[oc][c].
template <class T>
void transform_kernels4(const Conv2dGeometry& g, const T* weight, T* u) {
  transform_kernels_by_rows<36>(g, weight, u, [](const T* k, T* out) {
    T r[3][6];  // (G g)^T: column j of G g
    for (int j = 0; j < 3; ++j) g6(k[j], k[3 + j], k[6 + j], r[j]);
    for (int a = 0; a < 6; ++a) g6(r[0][a], r[1][a], r[2][a], out + 6 * a);  // (G g) G^T
  });
}

// F(2x2): V[k][c][column] = (B^T d B)[k] for the 4x4 tile d of every column, each input row's
// columns gathered once (for_each_tile_step carries a tile's last two rows to the tile below).
template <class Lanes, class T>
void transform_tiles(const Conv2dGeometry& g, const ForwardPlan& p, const T* images, int64_t count, T* padded, T* v) {
  using V = typename Lanes::V;
  const int64_t stride = p.v_tap;
  // B^T d B of the step whose tiles' rows are x[r] (column j of row r: x[r][j]), stored at o
  const auto transform = [stride](const V (&x)[4][4], T* o) {
    V a[4][4];  // B^T d
    for (int j = 0; j < 4; ++j) {
      a[0][j] = x[0][j] - x[2][j];
      a[1][j] = x[1][j] + x[2][j];
      a[2][j] = x[2][j] - x[1][j];
      a[3][j] = x[1][j] - x[3][j];
    }
    for (int i = 0; i < 4; ++i) {  // (B^T d) B
      Lanes::store(o + (4 * i + 0) * stride, a[i][0] - a[i][2]);
      Lanes::store(o + (4 * i + 1) * stride, a[i][1] + a[i][2]);
      Lanes::store(o + (4 * i + 2) * stride, a[i][2] - a[i][1]);
      Lanes::store(o + (4 * i + 3) * stride, a[i][1] - a[i][3]);
    }
  };
  const auto gather = [](const T* row, int64_t next, V (&x)[4]) {
    for (int j = 0; j < 4; ++j) x[j] = Lanes::column(row, next, j);
  };
  for_each_input_plane(g, p, images, count, padded, v, [&](const T* plane, T* out) {
    for_each_tile_step<Lanes, 4, 4>(p, plane, out, gather, transform);
  });
}

// F(2x2): y = A^T M A + bias for every column's tile, clipped to the output plane.
template <class Lanes, class T>
void untransform_tiles(const Conv2dGeometry& g, const ForwardPlan& p, const T* m, const T* bias, int64_t count,
                       T* rows, T* out_images) {
  using V = typename Lanes::V;
  const int64_t stride = p.m_tap;
  const auto outputs = [stride](const T* t, V b, V (&y)[2][2]) {  // y[i][j]: each tile's output (i, j)
    V s[2][4];  // A^T m
    for (int j = 0; j < 4; ++j) {
      const V m0 = Lanes::load(t + j * stride), m1 = Lanes::load(t + (4 + j) * stride);
      const V m2 = Lanes::load(t + (8 + j) * stride), m3 = Lanes::load(t + (12 + j) * stride);
      s[0][j] = m0 + m1 + m2;
      s[1][j] = m1 - m2 - m3;
    }
    for (int i = 0; i < 2; ++i) {  // (A^T m) A
      y[i][0] = s[i][0] + s[i][1] + s[i][2] + b;
      y[i][1] = s[i][1] - s[i][2] - s[i][3] + b;
    }
  };
  if constexpr (kQuadRows<Lanes>) {
    const int64_t ow = g.out_w;
    for_each_output_quad<Lanes>(g, p, m, bias, count, out_images, [&](const T* t, T* out, int64_t rows_left, V b) {
      V y[2][2];
      outputs(t, b, y);
      for (int i = 0; i < 2; ++i)
        Lanes::store_pair_rows(out + i * ow, 2 * ow, tile_rows_inside(rows_left, i, 2), ow, y[i][0], y[i][1]);
    });
  } else {
    for_each_output_step<Lanes>(g, p, m, bias, count, rows, out_images, [&](const T* t, T* const* out_rows, int64_t tw, V b) {
      V y[2][2];
      outputs(t, b, y);
      for (int i = 0; i < 2; ++i) Lanes::store_pairs(out_rows[i] + 2 * tw, y[i][0], y[i][1]);
    });
  }
}

// F(4x4): V[k][c][column] = (B^T d B)[k] for the 6x6 tile d of every column, k = 6a + b.
// Each tile row goes through B as it is read (holding all 36 gathered columns first spilled
// registers), once (for_each_tile_step carries a tile's last two rows' d B to the tile below).
template <class Lanes, class T>
void transform_tiles4(const Conv2dGeometry& g, const ForwardPlan& p, const T* images, int64_t count, T* padded, T* v) {
  using V = typename Lanes::V;
  const int64_t stride = p.v_tap;
  const auto row_times_b = [](const T* r, int64_t next, V* h) {  // row r of the tiles times B
    const V x[6] = {Lanes::template column4<0>(r, next), Lanes::template column4<1>(r, next),
                    Lanes::template column4<2>(r, next), Lanes::template column4<3>(r, next),
                    Lanes::template column4<4>(r, next), Lanes::template column4<5>(r, next)};
    bt6(x, h);
  };
  const auto columns_times_bt = [stride](const V (&h)[6][6], T* o) {  // B^T (d B), column b at a time
    for (int b = 0; b < 6; ++b) {
      const V col[6] = {h[0][b], h[1][b], h[2][b], h[3][b], h[4][b], h[5][b]};
      V r[6];
      bt6(col, r);
      for (int a = 0; a < 6; ++a) Lanes::store(o + (6 * a + b) * stride, r[a]);
    }
  };
  for_each_input_plane(g, p, images, count, padded, v, [&](const T* plane, T* out) {
    for_each_tile_step<Lanes, 6, 6>(p, plane, out, row_times_b, columns_times_bt);
  });
}

// F(4x4): y = A^T M A + bias for every column's tile, clipped to the output plane.
template <class Lanes, class T>
void untransform_tiles4(const Conv2dGeometry& g, const ForwardPlan& p, const T* m, const T* bias, int64_t count,
                        T* rows, T* out_images) {
  using V = typename Lanes::V;
  const int64_t stride = p.m_tap;
  const auto outputs = [stride](const T* t, V b, V (&y)[4][4]) {  // y[i][j]: each tile's output (i, j)
    V s[6][4];  // (A^T M)^T: s[j] is A^T applied to column j
    for (int j = 0; j < 6; ++j) {
      V col[6];
      for (int a = 0; a < 6; ++a) col[a] = Lanes::load(t + (6 * a + j) * stride);
      at6(col, s[j]);
    }
    for (int i = 0; i < 4; ++i) {  // (A^T M) A
      const V row[6] = {s[0][i], s[1][i], s[2][i], s[3][i], s[4][i], s[5][i]};
      at6(row, y[i]);
      for (int j = 0; j < 4; ++j) y[i][j] += b;
    }
  };
  if constexpr (kQuadRows<Lanes>) {
    const int64_t ow = g.out_w;
    for_each_output_quad<Lanes>(g, p, m, bias, count, out_images, [&](const T* t, T* out, int64_t rows_left, V b) {
      V y[4][4];
      outputs(t, b, y);
      for (int i = 0; i < 4; ++i)
        Lanes::store_quad_rows(out + i * ow, 4 * ow, tile_rows_inside(rows_left, i, 4), ow, y[i][0], y[i][1], y[i][2], y[i][3]);
    });
  } else {
    for_each_output_step<Lanes>(g, p, m, bias, count, rows, out_images, [&](const T* t, T* const* out_rows, int64_t tw, V b) {
      V y[4][4];
      outputs(t, b, y);
      for (int i = 0; i < 4; ++i) Lanes::store_quads(out_rows[i] + 4 * tw, y[i][0], y[i][1], y[i][2], y[i][3]);
    });
  }
}

static_assert(kTapSkew >= Float8Lanes::width - 1, "a vector step's overrun must stay inside the skew");

// One chunk's scratch, laid out from base: V, M, the padded plane
// (with read slack after it) and m row buffers, the last two zeroed (their borders must read
// zero). elements(p) is the layout's size; chunks(p, scratch) lays out every chunk of a
// [p.chunks, elements(p)] tensor before the OpenMP team starts.
template <class T>
struct ChunkScratch {
  T* v;
  T* m;
  T* padded;
  T* rows;
  ChunkScratch(const ForwardPlan& p, T* base)
      : v(base), m(v + p.taps * p.v_tap), padded(m + p.taps * p.m_tap),
        rows(padded + p.padded_h * p.padded_w + kReadSlack) {
    std::fill(padded, rows + p.tile * row_buffer(p), T(0));
  }
  static int64_t elements(const ForwardPlan& p) {
    return p.taps * (p.v_tap + p.m_tap) + p.padded_h * p.padded_w + kReadSlack + p.tile * row_buffer(p);
  }
  static std::vector<ChunkScratch> chunks(const ForwardPlan& p, const Tensor& scratch) {
    std::vector<ChunkScratch> out;
    for (int64_t chunk = 0; chunk < p.chunks; ++chunk) out.emplace_back(p, scratch.data<T>() + chunk * elements(p));
    return out;
  }
};

// One group of `count` images through the forward: their tiles transformed into V, the tap
// products M[k] = U[k] V[k], and M's tiles transformed into the output images, plus the bias.
template <class Lanes, class T>
void run_group(const Conv2dGeometry& g, const ForwardPlan& p, const std::vector<PackedA<T>>& packed,
               const ChunkScratch<T>& c, const T* images, int64_t count, const T* bias, T* out) {
  if (p.tile == 4) transform_tiles4<Lanes>(g, p, images, count, c.padded, c.v);
  else transform_tiles<Lanes>(g, p, images, count, c.padded, c.v);
  // V and M keep p.columns as their row stride, so a short group uses the left columns.
  for (int64_t k = 0; k < p.taps; ++k)
    gemm(packed[static_cast<size_t>(k)], count * p.tiles, {c.v + k * p.v_tap, p.columns}, {c.m + k * p.m_tap, p.columns});
  if (p.tile == 4) untransform_tiles4<Lanes>(g, p, c.m, bias, count, c.rows, out);
  else untransform_tiles<Lanes>(g, p, c.m, bias, count, c.rows, out);
}

// The lanes for quad_rows_apply's plans: Float16Quads for f32 where the build has them.
#if EMBER_WINOGRAD_QUAD_ROWS
template <class T>
using QuadLanesFor = std::conditional_t<std::is_same_v<T, float>, Float16Quads, ScalarLanes<T>>;
#else
template <class T>
using QuadLanesFor = LanesFor<T>;
#endif

}  // namespace

bool winograd_applies(const Conv2dGeometry& g) {
  return g.kernel_h == 3 && g.kernel_w == 3 && g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
         g.dilation_w == 1 && g.out_h > 0 && g.out_w > 0 && g.batch > 0 && g.in_channels > 0 && g.out_channels > 0;
}

bool winograd_pays(const Conv2dGeometry& g) {
  return winograd_applies(g) && g.in_channels >= kMinChannels && g.out_channels >= kMinChannels;
}

bool winograd4_pays(const Conv2dGeometry& g) {
  if (!winograd_pays(g)) return false;
  using Lanes = Float8Lanes;
  const ForwardPlan p = plan_for(g, 4);
  const int64_t steps = (p.tiles_w + Lanes::width - 1) / Lanes::width;
  // two rows of tiles share each vector, or tiles fill at least 7/8 of a row's vector steps
  return pair_rows<Lanes>(p, 0) || 8 * p.tiles_w >= 7 * steps * Lanes::width;
}

bool winograd4_weight_grad_pays(const Conv2dGeometry& g) { return winograd_pays(g); }

template <class T>
void conv2d_winograd(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const Tensor& y, int64_t tile) {
  EMBER_CHECK(tile == 2 || tile == 4, "conv2d_winograd: F(" << tile << "x" << tile << ", 3x3) is not implemented (2 or 4)");
  const ForwardPlan p = plan_for(g, tile);
  const bool f4 = tile == 4;
  const int64_t oc_count = g.out_channels, c_count = g.in_channels;
  Tensor kernels_u, scratch;
  {
    CategoryScope scope(MemoryCategory::workspace);
    kernels_u = empty(Shape{p.taps, oc_count, c_count}, TensorOptions().dtype(x.dtype()));
    scratch = empty(Shape{p.chunks, ChunkScratch<T>::elements(p)}, TensorOptions().dtype(x.dtype()));
  }
  if (!simulating()) {
    if (f4) transform_kernels4(g, weight.data<T>(), kernels_u.data<T>());
    else transform_kernels(g, weight.data<T>(), kernels_u.data<T>());
  }
  std::vector<MatrixRef<T>> taps;  // U[k] [OC, C], packed for the GEMM once for every group (workspace)
  for (int64_t k = 0; k < p.taps; ++k) taps.push_back({kernels_u.data<T>() + k * oc_count * c_count, c_count});
  const std::vector<PackedA<T>> packed = pack_each(oc_count, c_count, taps);
  if (simulating()) return;
  const T* b = bias.defined() ? bias.data<T>() : nullptr;
  const int64_t image_in = c_count * g.in_h * g.in_w, image_out = oc_count * g.out_h * g.out_w;
  const std::vector<ChunkScratch<T>> chunks = ChunkScratch<T>::chunks(p, scratch);
  const bool quads = quad_rows_apply<T>(p);
  for_each_group_as_threads_free(p, g.batch, [&](int64_t chunk, int64_t first, int64_t count) {
    const ChunkScratch<T>& c = chunks[static_cast<size_t>(chunk)];
    const T* images = x.data<T>() + first * image_in;
    T* out = y.data<T>() + first * image_out;
    if (quads) run_group<QuadLanesFor<T>>(g, p, packed, c, images, count, b, out);
    else run_group<LanesFor<T>>(g, p, packed, c, images, count, b, out);
  });
}

template void conv2d_winograd<float>(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t);
template void conv2d_winograd<double>(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t);

}  // namespace ember::kernels::cpu
