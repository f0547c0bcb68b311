// Winograd F(2x2, 3x3) on the CPU; the method and its error are in conv2d_winograd.h.
// Layout: U [16][OC][C] (all kernels, once per call), and per thread V [16][C][cols] and
// M [16][OC][cols], where a column is one 4x4 tile of one image of the thread's current
// group of images (kernels/cpu/conv2d_winograd_plan.h). Each U[k] is packed once per call for
// the GEMM (cpu::PackedA) and serves every group. Threads take contiguous ranges of images (one
// OpenMP team for the op); the GEMMs (kernels/cpu/gemm.h) inside run single-threaded. The
// weight gradient is conv2d_winograd_weight_grad.cpp.
#include "kernels/cpu/conv2d_winograd.h"
#include "kernels/cpu/conv2d_winograd_plan.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/simulation.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels::cpu {
namespace {

constexpr int64_t kTaps = kWinogradTaps;
constexpr int64_t kTapSkew = kWinogradTapSkew;
constexpr int64_t kMinChannels = 16;  // below this (a first layer), im2col's one GEMM wins
// Slack after a buffer that a vector step may read past its end (Float8Lanes::column reads 18).
constexpr int64_t kReadSlack = 32;

// The forward's cut of the batch, with its layout of V [16][C][columns] and M [16][OC][columns]:
// elements from one tap's block to the next.
struct ForwardPlan : WinogradPlan {
  int64_t v_tap, m_tap;
};

ForwardPlan plan_for(const Conv2dGeometry& g) {
  ForwardPlan p{winograd_plan(g), 0, 0};
  p.v_tap = g.in_channels * p.columns + kTapSkew;
  p.m_tap = g.out_channels * p.columns + kTapSkew;
  return p;
}

// U[k][oc][c] = (G g G^T)[k] for every kernel g = weight[oc][c].
template <class T>
void transform_kernels(const Conv2dGeometry& g, const T* weight, T* u) {
  const int64_t oc_count = g.out_channels, c_count = g.in_channels, stride = oc_count * c_count;
  parallel_for(oc_count, std::max<int64_t>(1, kParallelGrain / (c_count * 9)), [&](int64_t o0, int64_t o1) {
    for (int64_t oc = o0; oc < o1; ++oc)
      for (int64_t c = 0; c < c_count; ++c) {
        const T* k = weight + (oc * c_count + c) * 9;
        T r[4][3];  // G g
        for (int j = 0; j < 3; ++j) {
          r[0][j] = k[j];
          r[1][j] = T(0.5) * (k[j] + k[3 + j] + k[6 + j]);
          r[2][j] = T(0.5) * (k[j] - k[3 + j] + k[6 + j]);
          r[3][j] = k[6 + j];
        }
        T* out = u + oc * c_count + c;
        for (int i = 0; i < 4; ++i) {  // (G g) G^T
          out[(4 * i + 0) * stride] = r[i][0];
          out[(4 * i + 1) * stride] = T(0.5) * (r[i][0] + r[i][1] + r[i][2]);
          out[(4 * i + 2) * stride] = T(0.5) * (r[i][0] - r[i][1] + r[i][2]);
          out[(4 * i + 3) * stride] = r[i][2];
        }
      }
  });
}

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
};

// Copies n elements of one short row inline: std::copy's memmove call costs more than a
// 28-float row (ConvNet's planes), and the transforms copy hundreds of thousands per step.
template <class T>
inline void copy_row(const T* src, int64_t n, T* dst) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

// The length of a row buffer for one row of tiles: 2 values per tile, plus a vector step's overrun.
int64_t row_buffer(const ForwardPlan& p) { return 2 * p.tiles_w + kReadSlack; }

// Whether the tiles of rows th and th + 1 share one vector: a plane four tiles wide, a vector
// of eight, and a row th + 1.
template <class Lanes>
bool pair_rows(const ForwardPlan& p, int64_t th) {
  return Lanes::width == 8 && p.tiles_w == 4 && th + 1 < p.tiles_h;
}

// V[k][c][column] = (B^T d B)[k] for the 4x4 tile d of every column. Each input plane is first
// copied into `padded` (p.padded_h x p.padded_w, zero outside the plane: the caller zeroes it
// once, and the copies only ever write its interior), so no tile needs a bounds check.
template <class Lanes, class T>
void transform_tiles(const Conv2dGeometry& g, const ForwardPlan& p, const T* images, int64_t count, T* padded, T* v) {
  using V = typename Lanes::V;
  const int64_t c_count = g.in_channels, h = g.in_h, w = g.in_w, stride = p.v_tap, pw = p.padded_w;
  for (int64_t c = 0; c < c_count; ++c)
    for (int64_t image = 0; image < count; ++image) {
      const T* plane = images + (image * c_count + c) * h * w;
      for (int64_t row = 0; row < h; ++row)
        copy_row(plane + row * w, w, padded + (row + g.pad_h) * pw + g.pad_w);
      T* out = v + c * p.columns + image * p.tiles;
      for (int64_t th = 0; th < p.tiles_h; th += pair_rows<Lanes>(p, th) ? 2 : 1)
        for (int64_t tw = 0; tw < p.tiles_w; tw += Lanes::width) {
          const T* d0 = padded + 2 * th * pw + 2 * tw;
          const int64_t next = pair_rows<Lanes>(p, th) ? 2 * pw : 8;  // the upper lanes' inputs
          V a[4][4];  // B^T d
          for (int j = 0; j < 4; ++j) {
            const V x0 = Lanes::column(d0, next, j), x1 = Lanes::column(d0 + pw, next, j);
            const V x2 = Lanes::column(d0 + 2 * pw, next, j), x3 = Lanes::column(d0 + 3 * pw, next, j);
            a[0][j] = x0 - x2;
            a[1][j] = x1 + x2;
            a[2][j] = x2 - x1;
            a[3][j] = x1 - x3;
          }
          T* o = out + th * p.tiles_w + tw;
          for (int i = 0; i < 4; ++i) {  // (B^T d) B
            Lanes::store(o + (4 * i + 0) * stride, a[i][0] - a[i][2]);
            Lanes::store(o + (4 * i + 1) * stride, a[i][1] + a[i][2]);
            Lanes::store(o + (4 * i + 2) * stride, a[i][2] - a[i][1]);
            Lanes::store(o + (4 * i + 3) * stride, a[i][1] - a[i][3]);
          }
        }
    }
}

// y = A^T M A + bias for every column's tile, clipped to the output plane. `rows` holds two
// row buffers (row_buffer(p) each): a tile row's two output rows before they are clipped (with
// pair_rows, two tile rows': the second's from element 8 on).
template <class Lanes, class T>
void untransform_tiles(const Conv2dGeometry& g, const ForwardPlan& p, const T* m, const T* bias, int64_t count,
                       T* rows, T* out_images) {
  using V = typename Lanes::V;
  const int64_t oc_count = g.out_channels, oh_count = g.out_h, ow_count = g.out_w, stride = p.m_tap;
  T* wide[2] = {rows, rows + row_buffer(p)};
  for (int64_t image = 0; image < count; ++image)
    for (int64_t oc = 0; oc < oc_count; ++oc) {
      T* plane = out_images + (image * oc_count + oc) * oh_count * ow_count;
      const T* in = m + oc * p.columns + image * p.tiles;
      const V b = V{} + (bias != nullptr ? bias[oc] : T(0));
      for (int64_t th = 0; th < p.tiles_h;) {
        const int64_t tile_rows = pair_rows<Lanes>(p, th) ? 2 : 1;
        for (int64_t tw = 0; tw < p.tiles_w; tw += Lanes::width) {
          const T* t = in + th * p.tiles_w + tw;
          V s[2][4];  // A^T m
          for (int j = 0; j < 4; ++j) {
            const V m0 = Lanes::load(t + j * stride), m1 = Lanes::load(t + (4 + j) * stride);
            const V m2 = Lanes::load(t + (8 + j) * stride), m3 = Lanes::load(t + (12 + j) * stride);
            s[0][j] = m0 + m1 + m2;
            s[1][j] = m1 - m2 - m3;
          }
          for (int i = 0; i < 2; ++i)  // (A^T m) A: each tile's two outputs of row i
            Lanes::store_pairs(wide[i] + 2 * tw, s[i][0] + s[i][1] + s[i][2] + b, s[i][1] - s[i][2] - s[i][3] + b);
        }
        for (int64_t r = 0; r < tile_rows; ++r, ++th)
          for (int64_t i = 0; i < 2 && 2 * th + i < oh_count; ++i)
            copy_row(wide[i] + 8 * r, ow_count, plane + (2 * th + i) * ow_count);
      }
    }
}

static_assert(kTapSkew >= Float8Lanes::width - 1, "a vector step's overrun must stay inside the skew");

// The widest lanes for T.
template <class T>
using LanesFor = std::conditional_t<std::is_same_v<T, float>, Float8Lanes, ScalarLanes<T>>;

// One chunk's scratch, laid out from base: V, M, the padded plane
// (with read slack after it) and two row buffers, the last two zeroed (their borders must read
// zero). elements(p) is the layout's size; chunks(p, scratch) lays out every chunk of a
// [p.chunks, elements(p)] tensor before the OpenMP team starts.
template <class T>
struct ChunkScratch {
  T* v;
  T* m;
  T* padded;
  T* rows;
  ChunkScratch(const ForwardPlan& p, T* base)
      : v(base), m(v + kTaps * p.v_tap), padded(m + kTaps * p.m_tap),
        rows(padded + p.padded_h * p.padded_w + kReadSlack) {
    std::fill(padded, rows + 2 * row_buffer(p), T(0));
  }
  static int64_t elements(const ForwardPlan& p) {
    return kTaps * (p.v_tap + p.m_tap) + p.padded_h * p.padded_w + kReadSlack + 2 * row_buffer(p);
  }
  static std::vector<ChunkScratch> chunks(const ForwardPlan& p, const Tensor& scratch) {
    std::vector<ChunkScratch> out;
    for (int64_t chunk = 0; chunk < p.chunks; ++chunk) out.emplace_back(p, scratch.data<T>() + chunk * elements(p));
    return out;
  }
};

}  // namespace

bool winograd_applies(const Conv2dGeometry& g) {
  return g.kernel_h == 3 && g.kernel_w == 3 && g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
         g.dilation_w == 1 && g.out_h > 0 && g.out_w > 0 && g.batch > 0 && g.in_channels > 0 && g.out_channels > 0;
}

bool winograd_pays(const Conv2dGeometry& g) {
  return winograd_applies(g) && g.in_channels >= kMinChannels && g.out_channels >= kMinChannels;
}

template <class T>
void conv2d_winograd(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const Tensor& y) {
  const ForwardPlan p = plan_for(g);
  const int64_t oc_count = g.out_channels, c_count = g.in_channels;
  Tensor kernels_u, scratch;
  {
    CategoryScope scope(MemoryCategory::workspace);
    kernels_u = empty(Shape{kTaps, oc_count, c_count}, TensorOptions().dtype(x.dtype()));
    scratch = empty(Shape{p.chunks, ChunkScratch<T>::elements(p)}, TensorOptions().dtype(x.dtype()));
  }
  if (!simulating()) transform_kernels(g, weight.data<T>(), kernels_u.data<T>());
  std::vector<PackedA<T>> packed;  // U[k] [OC, C], packed for the GEMM once for every group (workspace)
  for (int64_t k = 0; k < kTaps; ++k)
    packed.emplace_back(oc_count, c_count, MatrixRef<T>{kernels_u.data<T>() + k * oc_count * c_count, c_count});
  if (simulating()) return;
  const T* b = bias.defined() ? bias.data<T>() : nullptr;
  const int64_t image_in = c_count * g.in_h * g.in_w, image_out = oc_count * g.out_h * g.out_w;
  const std::vector<ChunkScratch<T>> chunks = ChunkScratch<T>::chunks(p, scratch);
  for_each_group(p, g.batch, [&](int64_t chunk, int64_t first, int64_t count) {
    const ChunkScratch<T>& c = chunks[static_cast<size_t>(chunk)];
    const int64_t columns = count * p.tiles;
    transform_tiles<LanesFor<T>>(g, p, x.data<T>() + first * image_in, count, c.padded, c.v);
    // V and M keep p.columns as their row stride, so a short group uses the left columns.
    for (int64_t k = 0; k < kTaps; ++k)
      gemm(packed[static_cast<size_t>(k)], columns, {c.v + k * p.v_tap, p.columns}, {c.m + k * p.m_tap, p.columns});
    untransform_tiles<LanesFor<T>>(g, p, c.m, b, count, c.rows, y.data<T>() + first * image_out);
  });
}

template void conv2d_winograd<float>(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
template void conv2d_winograd<double>(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&, const Tensor&);

}  // namespace ember::kernels::cpu
