// Winograd F(2x2, 3x3) on the CPU; the method and its error are in conv2d_winograd.h.
// Layout: U [16][OC][C] (all kernels, once per call), and per thread V [16][C][cols] and
// M [16][OC][cols], where a column is one 4x4 tile of one image of the thread's current
// group of images. Each U[k] is packed once per call for the GEMM (cpu::PackedA) and serves
// every group. The weight gradient runs the same steps backwards (each transform's
// adjoint): dM = A dy A^T per tile, dU[k] = sum over columns of dM[k] V[k]^T (16 GEMMs
// per group, accumulated per thread), dweight = G^T dU G. Threads take contiguous ranges of
// groups (one OpenMP team for the op); the GEMMs (kernels/cpu/gemm.h) inside run
// single-threaded.
#include "kernels/cpu/conv2d_winograd.h"

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

constexpr int64_t kTaps = 16;           // a 4x4 tile
constexpr int64_t kColumnsWanted = 192;  // tiles per GEMM: wide enough for the GEMM kernel's panels
constexpr int64_t kMinChannels = 16;     // below this (a first layer), im2col's one GEMM wins
// A tile's 16 values go to 16 tap blocks; were the blocks a multiple of 4 KiB apart (64
// channels x 192 columns of f32 is 48 KiB) all 16 stores would fall in one L1 set and evict
// each other (ResNet-20's 7x7 layer ran 3x slower). 16 elements between blocks spread them.
// The skew also takes a vector step's overrun past the last channel's columns (7 floats).
constexpr int64_t kTapSkew = 16;
// Slack after a buffer that a vector step may read past its end (Float8Lanes::column reads 18).
constexpr int64_t kReadSlack = 32;

struct WinogradPlan {
  int64_t tiles_h, tiles_w, tiles;  // per image
  int64_t group;                    // images per GEMM
  int64_t groups, chunks;           // groups in the batch; thread chunks (one scratch each)
  int64_t columns;                  // tiles * group
  int64_t padded_h, padded_w;       // an input plane with its padding, covering every tile
  int64_t v_tap, m_tap;             // elements from one tap's block of V (M) to the next
};

WinogradPlan plan_for(const Conv2dGeometry& g) {
  WinogradPlan p{};
  p.tiles_h = (g.out_h + 1) / 2;
  p.tiles_w = (g.out_w + 1) / 2;
  p.tiles = p.tiles_h * p.tiles_w;
  p.group = std::clamp<int64_t>((kColumnsWanted + p.tiles - 1) / p.tiles, 1, g.batch);
  p.groups = (g.batch + p.group - 1) / p.group;
  p.chunks = std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), p.groups));
  p.columns = p.tiles * p.group;
  p.padded_h = 2 * p.tiles_h + 2;
  p.padded_w = 2 * p.tiles_w + 2;
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
// column(row, j). A vector step may run past the row's last tile: it reads into slack that
// every buffer it reads has, and writes into columns that are written again later (the next
// tile row, the next image, the next channel's row: the loops run channel by channel) or
// never read (the tap blocks' skew), so nothing it leaves behind is ever used.
template <class T>
struct ScalarLanes {
  using V = T;
  static constexpr int64_t width = 1;
  static V column(const T* row, int j) { return row[j]; }
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
  static V column(const float* row, int j) {  // row[2t + j] for t = 0..7: reads row[0, 18)
    const float* base = row + (j & 2);
    const V lo = load(base), hi = load(base + 8);
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
int64_t row_buffer(const WinogradPlan& p) { return 2 * p.tiles_w + kReadSlack; }

// V[k][c][column] = (B^T d B)[k] for the 4x4 tile d of every column. Each input plane is first
// copied into `padded` (p.padded_h x p.padded_w, zero outside the plane: the caller zeroes it
// once, and the copies only ever write its interior), so no tile needs a bounds check.
template <class Lanes, class T>
void transform_tiles(const Conv2dGeometry& g, const WinogradPlan& p, const T* images, int64_t count, T* padded, T* v) {
  using V = typename Lanes::V;
  const int64_t c_count = g.in_channels, h = g.in_h, w = g.in_w, stride = p.v_tap, pw = p.padded_w;
  for (int64_t c = 0; c < c_count; ++c)
    for (int64_t image = 0; image < count; ++image) {
      const T* plane = images + (image * c_count + c) * h * w;
      for (int64_t row = 0; row < h; ++row)
        copy_row(plane + row * w, w, padded + (row + g.pad_h) * pw + g.pad_w);
      T* out = v + c * p.columns + image * p.tiles;
      for (int64_t th = 0; th < p.tiles_h; ++th)
        for (int64_t tw = 0; tw < p.tiles_w; tw += Lanes::width) {
          const T* d0 = padded + 2 * th * pw + 2 * tw;
          V a[4][4];  // B^T d
          for (int j = 0; j < 4; ++j) {
            const V x0 = Lanes::column(d0, j), x1 = Lanes::column(d0 + pw, j);
            const V x2 = Lanes::column(d0 + 2 * pw, j), x3 = Lanes::column(d0 + 3 * pw, j);
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
// row buffers (row_buffer(p) each): a tile row's two output rows before they are clipped.
template <class Lanes, class T>
void untransform_tiles(const Conv2dGeometry& g, const WinogradPlan& p, const T* m, const T* bias, int64_t count,
                       T* rows, T* out_images) {
  using V = typename Lanes::V;
  const int64_t oc_count = g.out_channels, oh_count = g.out_h, ow_count = g.out_w, stride = p.m_tap;
  T* wide[2] = {rows, rows + row_buffer(p)};
  for (int64_t image = 0; image < count; ++image)
    for (int64_t oc = 0; oc < oc_count; ++oc) {
      T* plane = out_images + (image * oc_count + oc) * oh_count * ow_count;
      const T* in = m + oc * p.columns + image * p.tiles;
      const V b = V{} + (bias != nullptr ? bias[oc] : T(0));
      for (int64_t th = 0; th < p.tiles_h; ++th) {
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
        for (int64_t i = 0; i < 2 && 2 * th + i < oh_count; ++i)
          copy_row(wide[i], ow_count, plane + (2 * th + i) * ow_count);
      }
    }
}

// Y[k][oc][column] = (A dy A^T)[k] for the 2x2 output-gradient block of every column (zero
// past the plane's edge): the adjoint of untransform_tiles. `rows` holds two zeroed row
// buffers (row_buffer(p) each) that the output-gradient rows are copied into, so that the
// tiles past the plane's right and bottom edges read zeros.
template <class Lanes, class T>
void transform_output_grads(const Conv2dGeometry& g, const WinogradPlan& p, const T* grads, int64_t count, T* rows,
                            T* out) {
  using V = typename Lanes::V;
  const int64_t oc_count = g.out_channels, oh_count = g.out_h, ow_count = g.out_w, stride = p.m_tap;
  T* dy[2] = {rows, rows + row_buffer(p)};
  for (int64_t oc = 0; oc < oc_count; ++oc)
    for (int64_t image = 0; image < count; ++image) {
      const T* plane = grads + (image * oc_count + oc) * oh_count * ow_count;
      T* o = out + oc * p.columns + image * p.tiles;
      for (int64_t th = 0; th < p.tiles_h; ++th) {
        for (int64_t i = 0; i < 2; ++i) {
          const int64_t oh = 2 * th + i;
          if (oh < oh_count) copy_row(plane + oh * ow_count, ow_count, dy[i]);
          else std::fill(dy[i], dy[i] + ow_count, T(0));
        }
        for (int64_t tw = 0; tw < p.tiles_w; tw += Lanes::width) {
          const V d00 = Lanes::column(dy[0] + 2 * tw, 0), d01 = Lanes::column(dy[0] + 2 * tw, 1);
          const V d10 = Lanes::column(dy[1] + 2 * tw, 0), d11 = Lanes::column(dy[1] + 2 * tw, 1);
          const V r[4][2] = {{d00, d01}, {d00 + d10, d01 + d11}, {d00 - d10, d01 - d11}, {-d10, -d11}};  // A dy
          T* t = o + th * p.tiles_w + tw;
          for (int i = 0; i < 4; ++i) {  // (A dy) A^T
            Lanes::store(t + (4 * i + 0) * stride, r[i][0]);
            Lanes::store(t + (4 * i + 1) * stride, r[i][0] + r[i][1]);
            Lanes::store(t + (4 * i + 2) * stride, r[i][0] - r[i][1]);
            Lanes::store(t + (4 * i + 3) * stride, -r[i][1]);
          }
        }
      }
    }
}

static_assert(kTapSkew >= Float8Lanes::width - 1, "a vector step's overrun must stay inside the skew");

// The widest lanes for T.
template <class T>
using LanesFor = std::conditional_t<std::is_same_v<T, float>, Float8Lanes, ScalarLanes<T>>;

// dweight[oc][c] = G^T dU[.][oc][c] G: the adjoint of transform_kernels.
template <class T>
void untransform_kernel_grads(const Conv2dGeometry& g, const T* du, T* dweight) {
  const int64_t c_count = g.in_channels, stride = g.out_channels * c_count;
  for (int64_t i = 0; i < stride; ++i) {
    T u[4][4];
    for (int k = 0; k < kTaps; ++k) u[k / 4][k % 4] = du[k * stride + i];
    T t[3][4];  // G^T dU
    for (int j = 0; j < 4; ++j) {
      t[0][j] = u[0][j] + T(0.5) * (u[1][j] + u[2][j]);
      t[1][j] = T(0.5) * (u[1][j] - u[2][j]);
      t[2][j] = T(0.5) * (u[1][j] + u[2][j]) + u[3][j];
    }
    T* out = dweight + i * 9;  // i = oc * C + c, the kernel's offset / 9
    for (int r = 0; r < 3; ++r) {  // (G^T dU) G
      out[r * 3 + 0] = t[r][0] + T(0.5) * (t[r][1] + t[r][2]);
      out[r * 3 + 1] = T(0.5) * (t[r][1] - t[r][2]);
      out[r * 3 + 2] = T(0.5) * (t[r][1] + t[r][2]) + t[r][3];
    }
  }
}

// One chunk's scratch, laid out from base: V, M (dM for the weight gradient), the padded plane
// (with read slack after it) and two row buffers, the last two zeroed (their borders must read
// zero). elements(p) is the layout's size; chunks(p, scratch) lays out every chunk of a
// [p.chunks, elements(p)] tensor before the OpenMP team starts.
template <class T>
struct ChunkScratch {
  T* v;
  T* m;
  T* padded;
  T* rows;
  ChunkScratch(const WinogradPlan& p, T* base)
      : v(base), m(v + kTaps * p.v_tap), padded(m + kTaps * p.m_tap),
        rows(padded + p.padded_h * p.padded_w + kReadSlack) {
    std::fill(padded, rows + 2 * row_buffer(p), T(0));
  }
  static int64_t elements(const WinogradPlan& p) {
    return kTaps * (p.v_tap + p.m_tap) + p.padded_h * p.padded_w + kReadSlack + 2 * row_buffer(p);
  }
  static std::vector<ChunkScratch> chunks(const WinogradPlan& p, const Tensor& scratch) {
    std::vector<ChunkScratch> out;
    for (int64_t chunk = 0; chunk < p.chunks; ++chunk) out.emplace_back(p, scratch.data<T>() + chunk * elements(p));
    return out;
  }
};

// Calls fn(chunk, first, count) for each chunk's groups of images [first, first + count), in
// order (the last group may be short); the chunks run on one OpenMP team.
template <class Fn>
void for_each_group(const WinogradPlan& p, int64_t batch, const Fn& fn) {
  parallel_for(p.chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t chunk = c0; chunk < c1; ++chunk) {
      const int64_t last = p.groups * (chunk + 1) / p.chunks;
      for (int64_t group = p.groups * chunk / p.chunks; group < last; ++group) {
        const int64_t first = group * p.group;
        fn(chunk, first, std::min(p.group, batch - first));
      }
    }
  });
}

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
  const WinogradPlan p = plan_for(g);
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

template <class T>
void conv2d_winograd_weight_grad(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, const Tensor& dweight) {
  const WinogradPlan p = plan_for(g);
  const int64_t oc_count = g.out_channels, c_count = g.in_channels, kernel_grads = kTaps * oc_count * c_count;
  Tensor partial, scratch;  // one dU [16][OC][C] per chunk, summed in chunk order: deterministic
  {
    CategoryScope scope(MemoryCategory::workspace);
    partial = empty(Shape{p.chunks, kernel_grads}, TensorOptions().dtype(x.dtype()));
    scratch = empty(Shape{p.chunks, ChunkScratch<T>::elements(p)}, TensorOptions().dtype(x.dtype()));
  }
  if (simulating()) return;
  const int64_t image_in = c_count * g.in_h * g.in_w, image_out = oc_count * g.out_h * g.out_w;
  const std::vector<ChunkScratch<T>> chunks = ChunkScratch<T>::chunks(p, scratch);  // M holds dM here
  std::fill(partial.data<T>(), partial.data<T>() + p.chunks * kernel_grads, T(0));
  for_each_group(p, g.batch, [&](int64_t chunk, int64_t first, int64_t count) {
    const ChunkScratch<T>& c = chunks[static_cast<size_t>(chunk)];
    T* du = partial.data<T>() + chunk * kernel_grads;
    const int64_t columns = count * p.tiles;
    transform_tiles<LanesFor<T>>(g, p, x.data<T>() + first * image_in, count, c.padded, c.v);
    transform_output_grads<LanesFor<T>>(g, p, dy.data<T>() + first * image_out, count, c.rows, c.m);
    for (int64_t k = 0; k < kTaps; ++k)  // dU[k] [OC, C] += dM[k] [OC, columns] V[k]^T
      gemm<T>(oc_count, c_count, columns, {c.m + k * p.m_tap, p.columns}, {c.v + k * p.v_tap, p.columns, true},
              {du + k * oc_count * c_count, c_count, T(1)});
  });
  T* total = partial.data<T>();
  for (int64_t chunk = 1; chunk < p.chunks; ++chunk) {
    const T* part = total + chunk * kernel_grads;
    for (int64_t i = 0; i < kernel_grads; ++i) total[i] += part[i];
  }
  untransform_kernel_grads(g, total, dweight.data<T>());
}

template void conv2d_winograd<float>(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
template void conv2d_winograd<double>(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
template void conv2d_winograd_weight_grad<float>(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&);
template void conv2d_winograd_weight_grad<double>(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&);

}  // namespace ember::kernels::cpu
