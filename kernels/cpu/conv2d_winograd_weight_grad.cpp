// Winograd's weight gradient on the CPU (kernels/cpu/conv2d_winograd.h), F(2x2, 3x3) or
// F(4x4, 3x3): the forward's steps run backwards, each transform's adjoint (n = m + 2, taps = n^2):
//
//   V  = B^T d B     each n x n input tile, as in the forward
//   dM = A dy A^T    each m x m block of the output gradient, into an n x n tile
//   dU[k] [OC, C] = sum over columns of dM[k][oc][col] V[k][c][col]   (taps GEMMs per group)
//   dweight = G^T dU G
//
// Channels last. The sum runs along the columns (tiles), which the forward's layout
// (V [taps][C][cols]) keeps contiguous; the GEMM would then transpose both operands into its
// panels for every group, and did (measured on ResNet-20: the packing took longer than the
// products). Here both are written with the channels innermost, V [taps][cols][C] and
// dM [taps][cols][OC]: dM is A stored transposed (read in place where its rows hold whole
// panels, else copied into them without a transpose) and V is B as stored (read in place).
// The transforms run over L channels at a time (one vector), on an image first copied channels
// last (x into a zero-bordered [padded_h][padded_w][C] plane, dy into a zero-bordered
// [m tiles_h][m tiles_w][OC] one), so each tap of a tile is one whole vector load or store,
// whatever the plane's width. Channel counts are padded to whole vectors in the scratch; the
// padding lanes are computed on zeros, and the GEMM reads dM's only as rows past OC of its last
// panel, whose sums it never writes.
//
// Each thread (chunk) accumulates its own dU; the chunks are summed in chunk order, so the
// result is deterministic for a given thread count.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/simulation.h"
#include "kernels/cpu/conv2d_winograd.h"
#include "kernels/cpu/conv2d_winograd_f4.h"
#include "kernels/cpu/conv2d_winograd_plan.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/prefetch.h"
#include "kernels/cpu/transpose_block.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels::cpu {
namespace {

// F(4x4)'s tiles per group: half the forward's. V and dM hold 36 taps, not 16; at ~192 columns
// of 16 channels they are 0.9 MB together, past a 512 KiB L2 (measured on a 2-core AMD EPYC
// Zen 3, AVX2, one thread: ResNet-20's stage-1 weight gradient 2.69 -> 2.30 ms, its 7x7 one
// 2.87 -> 2.11, ConvNet's 64->64 7.20 -> 6.44 with 96; 48 was no faster). F(2x2) at 96 was
// no faster than at 192.
constexpr int64_t kColumnsWanted4 = 96;

// Channels of T in one vector of the widest unit this file is compiled for (GCC and Clang vector
// extensions): 64 bytes where the build has AVX-512 (16 f32 channels, a whole 16-channel layer:
// ResNet-20's weight gradients 3-11% faster than with 32-byte vectors, `bench_conv --threads=1`,
// three interleaved rounds), 32 elsewhere.
#if defined(__AVX512F__)
inline constexpr int64_t kChannelVectorBytes = 64;
#else
inline constexpr int64_t kChannelVectorBytes = 32;
#endif
template <class T>
struct ChannelLanes {
  typedef T V __attribute__((vector_size(kChannelVectorBytes)));
  static constexpr int64_t width = kChannelVectorBytes / sizeof(T);
  static V load(const T* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(T* p, V v) { std::memcpy(p, &v, sizeof v); }
};

int64_t whole_vectors(int64_t channels, int64_t lanes) { return (channels + lanes - 1) / lanes * lanes; }

// One chunk's scratch, laid out from base, channels last: V [taps][columns][cv] and
// dM [taps][columns][ov] (a skew after each tap's block), the input plane [padded_h][padded_w][cv]
// and the output-gradient plane [m tiles_h][m tiles_w][ov], cv and ov being C and OC rounded up
// to whole vectors, ov first up to the GEMM kernel's panel of rows (gemm_transposed_a_rows: AVX2's
// 6-row panels over 16 channels read rows of 18), so that dM^T is read where it lies, not packed
// for every tap and group (AVX2: ResNet-20's step ~115 -> ~106 ms on one thread). The planes are
// zeroed when laid out (their borders and padding lanes stay zero); V and dM are not: the
// transforms write every lane of every column a group's GEMMs read.
template <class T>
struct Scratch {
  int64_t cv, ov;        // channels per column (and pixel), padded
  int64_t v_tap, m_tap;  // elements from one tap's block to the next
  T* v;
  T* dm;
  T* x_plane;
  T* dy_plane;

  Scratch(const Conv2dGeometry& g, const WinogradPlan& p) {
    cv = whole_vectors(g.in_channels, ChannelLanes<T>::width);
    ov = whole_vectors(gemm_transposed_a_rows<T>(g.out_channels), ChannelLanes<T>::width);
    v_tap = p.columns * cv + kWinogradTapSkew;
    m_tap = p.columns * ov + kWinogradTapSkew;
  }
  int64_t elements(const WinogradPlan& p) const {
    return p.taps * (v_tap + m_tap) + p.padded_h * p.padded_w * cv + p.tile * p.tile * p.tiles * ov;
  }
  void lay_out(const WinogradPlan& p, T* base) {
    v = base;
    dm = v + p.taps * v_tap;
    x_plane = dm + p.taps * m_tap;
    dy_plane = x_plane + p.padded_h * p.padded_w * cv;
    std::fill(x_plane, base + elements(p), T(0));
  }
};

// The channels of planes [channels][h][w] channels last: pixel (y, x) to out + (y * ldo + x) * ld,
// its channels consecutive; blocks of 8 channels by 8 pixels transposed in registers (a row's
// last block overlapping the one before it: same values; planes narrower than 8 pixels in
// blocks of 8 consecutive pixels of the whole plane, through a small buffer). The planes come
// from memory (a saved activation, an output gradient), eight of them per block, so each block
// prefetches the next one's eight planes as it goes (contiguous: an eighth of them per row), and
// the last block `next`'s first eight planes, what the caller reads next (null: nothing).
// Measured: this weight gradient's copies and transforms 11.8% -> 8.7% of a ResNet-20 step.
template <class T>
void channels_last(const T* planes, int64_t channels, int64_t h, int64_t w, T* out, int64_t ldo, int64_t ld,
                   const T* next) {
  const int64_t plane = h * w;
  int64_t c0 = 0;
  for (; c0 + 8 <= channels; c0 += 8) {
    const T* ahead = c0 + 16 <= channels ? planes + (c0 + 8) * plane : next;
    const T* in = planes + c0 * plane;
    if (w < 8 && plane >= 8) {
      T block[8][8];  // 8 pixels x 8 channels
      for (int64_t p = 0; p < plane; p += 8) {
        const int64_t first = std::min(p, plane - 8);
        if (ahead != nullptr) prefetch_range(ahead + 8 * first, 64);
        transpose_block<8>(in + first, plane, &block[0][0], 8);
        for (int64_t q = 0; q < 8; ++q)
          std::memcpy(out + ((first + q) / w * ldo + (first + q) % w) * ld + c0, block[q], sizeof block[q]);
      }
      continue;
    }
    for (int64_t y = 0; y < h; ++y, in += w) {
      if (ahead != nullptr) prefetch_range(ahead + 8 * y * w, 8 * w);
      T* o = out + y * ldo * ld + c0;
      int64_t x = 0;
      for (; x + 8 <= w; x += 8) transpose_block<8>(in + x, plane, o + x * ld, ld);
      if (x < w && w >= 8) {
        transpose_block<8>(in + w - 8, plane, o + (w - 8) * ld, ld);
        continue;
      }
      for (; x < w; ++x)
        for (int64_t c = 0; c < 8; ++c) o[x * ld + c] = in[c * plane + x];
    }
  }
  for (int64_t c = c0; c < channels; ++c)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) out[(y * ldo + x) * ld + c] = planes[c * plane + y * w + x];
}

// Calls fn(in, out) for each of one image's tiles (columns from `column` on) and each vector of
// its L channels: `in` that vector at the tile's first pixel in a channels-last plane `width`
// pixels wide with `channels` per pixel, `out` the same channels of the tile's column in the
// first tap block (`channels` per column too).
template <class T, class Fn>
void for_each_tile_vector(const WinogradPlan& p, const T* plane, int64_t width, int64_t channels, int64_t column,
                          T* taps, const Fn& fn) {
  for (int64_t th = 0; th < p.tiles_h; ++th)
    for (int64_t tw = 0; tw < p.tiles_w; ++tw, ++column) {
      const T* in = plane + (p.tile * th * width + p.tile * tw) * channels;
      T* out = taps + column * channels;
      for (int64_t c = 0; c < channels; c += ChannelLanes<T>::width) fn(in + c, out + c);
    }
}

// F(2x2): V[k][column][c] = (B^T d B)[k] for the 4x4 tile d of each of one image's tiles (columns
// from `column` on), L channels at a time.
template <class T>
void transform_input_tiles2(const WinogradPlan& p, const T* plane, int64_t cv, int64_t column, int64_t v_tap, T* v) {
  using Lanes = ChannelLanes<T>;
  using V = typename Lanes::V;
  const int64_t row = p.padded_w * cv;  // elements from one plane row to the next
  for_each_tile_vector(p, plane, p.padded_w, cv, column, v, [&](const T* d0, T* o) {
    V a[4][4];  // B^T d
    for (int j = 0; j < 4; ++j) {
      const T* d = d0 + j * cv;
      const V x0 = Lanes::load(d), x1 = Lanes::load(d + row), x2 = Lanes::load(d + 2 * row), x3 = Lanes::load(d + 3 * row);
      a[0][j] = x0 - x2;
      a[1][j] = x1 + x2;
      a[2][j] = x2 - x1;
      a[3][j] = x1 - x3;
    }
    for (int i = 0; i < 4; ++i) {  // (B^T d) B
      Lanes::store(o + (4 * i + 0) * v_tap, a[i][0] - a[i][2]);
      Lanes::store(o + (4 * i + 1) * v_tap, a[i][1] + a[i][2]);
      Lanes::store(o + (4 * i + 2) * v_tap, a[i][2] - a[i][1]);
      Lanes::store(o + (4 * i + 3) * v_tap, a[i][1] - a[i][3]);
    }
  });
}

// F(2x2): dM[k][column][oc] = (A dy A^T)[k] for the 2x2 block of the output gradient of each of
// one image's tiles: the adjoint of the forward's A^T m A, L channels at a time.
template <class T>
void transform_output_grad_tiles2(const WinogradPlan& p, const T* plane, int64_t ov, int64_t column, int64_t m_tap,
                                  T* dm) {
  using Lanes = ChannelLanes<T>;
  using V = typename Lanes::V;
  const int64_t row = 2 * p.tiles_w * ov;
  for_each_tile_vector(p, plane, 2 * p.tiles_w, ov, column, dm, [&](const T* d, T* o) {
    const V d00 = Lanes::load(d), d01 = Lanes::load(d + ov);
    const V d10 = Lanes::load(d + row), d11 = Lanes::load(d + row + ov);
    const V r[4][2] = {{d00, d01}, {d00 + d10, d01 + d11}, {d00 - d10, d01 - d11}, {-d10, -d11}};  // A dy
    for (int i = 0; i < 4; ++i) {  // (A dy) A^T
      Lanes::store(o + (4 * i + 0) * m_tap, r[i][0]);
      Lanes::store(o + (4 * i + 1) * m_tap, r[i][0] + r[i][1]);
      Lanes::store(o + (4 * i + 2) * m_tap, r[i][0] - r[i][1]);
      Lanes::store(o + (4 * i + 3) * m_tap, -r[i][1]);
    }
  });
}

// F(2x2): dweight[oc][c] = G^T dU[.][oc][c] G: the adjoint of the forward's U = G g G^T, for
// i = oc * C + c in [i0, i1).
template <class T>
void untransform_kernel_grads2(const Conv2dGeometry& g, const T* du, T* dweight, int64_t i0, int64_t i1) {
  const int64_t stride = g.out_channels * g.in_channels;
  for (int64_t i = i0; i < i1; ++i) {
    T u[4][4];
    for (int k = 0; k < 16; ++k) u[k / 4][k % 4] = du[k * stride + i];
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


// F(4x4): V[k][column][c] = (B^T d B)[k], k = 6a + b, for the 6x6 tile d of each of one image's
// tiles (columns from `column` on), L channels at a time: each row of d through B as it is read,
// then each column of d B through B^T.
template <class T>
void transform_input_tiles4(const WinogradPlan& p, const T* plane, int64_t cv, int64_t column, int64_t v_tap, T* v) {
  using Lanes = ChannelLanes<T>;
  using V = typename Lanes::V;
  const int64_t row = p.padded_w * cv;
  for_each_tile_vector(p, plane, p.padded_w, cv, column, v, [&](const T* d0, T* o) {
    V h[6][6];  // d B, row i at h[i]
    for (int i = 0; i < 6; ++i) {
      const T* d = d0 + i * row;
      const V x[6] = {Lanes::load(d),          Lanes::load(d + cv),     Lanes::load(d + 2 * cv),
                      Lanes::load(d + 3 * cv), Lanes::load(d + 4 * cv), Lanes::load(d + 5 * cv)};
      bt6(x, h[i]);
    }
    for (int b = 0; b < 6; ++b) {  // B^T (d B), column b
      const V col[6] = {h[0][b], h[1][b], h[2][b], h[3][b], h[4][b], h[5][b]};
      V r[6];
      bt6(col, r);
      for (int a = 0; a < 6; ++a) Lanes::store(o + (6 * a + b) * v_tap, r[a]);
    }
  });
}

// F(4x4): dM[k][column][oc] = (A dy A^T)[k], k = 6a + b, for the 4x4 block of the output gradient
// of each of one image's tiles: the adjoint of the forward's A^T M A, L channels at a time.
template <class T>
void transform_output_grad_tiles4(const WinogradPlan& p, const T* plane, int64_t ov, int64_t column, int64_t m_tap,
                                  T* dm) {
  using Lanes = ChannelLanes<T>;
  using V = typename Lanes::V;
  const int64_t row = 4 * p.tiles_w * ov;
  for_each_tile_vector(p, plane, 4 * p.tiles_w, ov, column, dm, [&](const T* d0, T* o) {
    V h[4][6];  // dy A^T, row i at h[i]
    for (int i = 0; i < 4; ++i) {
      const T* d = d0 + i * row;
      const V y[4] = {Lanes::load(d), Lanes::load(d + ov), Lanes::load(d + 2 * ov), Lanes::load(d + 3 * ov)};
      a6(y, h[i]);
    }
    for (int b = 0; b < 6; ++b) {  // A (dy A^T), column b
      const V col[4] = {h[0][b], h[1][b], h[2][b], h[3][b]};
      V r[6];
      a6(col, r);
      for (int a = 0; a < 6; ++a) Lanes::store(o + (6 * a + b) * m_tap, r[a]);
    }
  });
}

// F(4x4): dweight[oc][c] = G^T dU[.][oc][c] G: the adjoint of the forward's U = G g G^T, for
// i = oc * C + c in [i0, i1), L pairs per vector (each tap's dU is contiguous along i; a last
// short vector is read through a zeroed buffer, so every pair takes the same steps wherever the
// range is cut), each vector's kernels written out through a buffer.
template <class T>
void untransform_kernel_grads4(const Conv2dGeometry& g, const T* du, T* dweight, int64_t i0, int64_t i1) {
  using Lanes = ChannelLanes<T>;
  using V = typename Lanes::V;
  constexpr int64_t L = Lanes::width;
  const int64_t stride = g.out_channels * g.in_channels;
  for (int64_t i = i0; i < i1; i += L) {
    const int64_t pairs = std::min(L, i1 - i);
    T short_taps[36][L];
    if (pairs < L)
      for (int k = 0; k < 36; ++k) {
        std::fill(short_taps[k], short_taps[k] + L, T(0));
        std::copy(du + k * stride + i, du + k * stride + i + pairs, short_taps[k]);
      }
    const auto tap = [&](int k) { return Lanes::load(pairs < L ? short_taps[k] : du + k * stride + i); };
    V t[3][6];  // G^T dU, column b at t[.][b]
    for (int b = 0; b < 6; ++b) {
      V col[6], r[3];
      for (int a = 0; a < 6; ++a) col[a] = tap(6 * a + b);
      gt6<V, T>(col, r);
      for (int q = 0; q < 3; ++q) t[q][b] = r[q];
    }
    V out[9];
    for (int r = 0; r < 3; ++r) gt6<V, T>(t[r], out + 3 * r);  // (G^T dU) G
    T kernels[9][L];
    for (int e = 0; e < 9; ++e) Lanes::store(kernels[e], out[e]);
    for (int64_t j = 0; j < pairs; ++j)
      for (int e = 0; e < 9; ++e) dweight[(i + j) * 9 + e] = kernels[e][j];
  }
}

}  // namespace

template <class T>
void conv2d_winograd_weight_grad(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, const Tensor& dweight,
                                 int64_t tile) {
  EMBER_CHECK(tile == 2 || tile == 4, "conv2d_winograd_weight_grad: no F(" << tile << "x" << tile << ", 3x3)");
  const WinogradPlan p = winograd_plan(g, tile, tile == 4 ? kColumnsWanted4 : kWinogradColumnsWanted);
  const int64_t oc_count = g.out_channels, c_count = g.in_channels, kernel_grads = p.taps * oc_count * c_count;
  const Scratch<T> layout(g, p);
  Tensor partial, scratch;  // one dU [taps][OC][C] per chunk
  {
    CategoryScope scope(MemoryCategory::workspace);
    partial = empty(Shape{p.chunks, kernel_grads}, TensorOptions().dtype(x.dtype()));
    scratch = empty(Shape{p.chunks, layout.elements(p)}, TensorOptions().dtype(x.dtype()));
  }
  if (simulating()) return;
  std::vector<Scratch<T>> chunks(static_cast<size_t>(p.chunks), layout);  // laid out by their own threads
  const int64_t image_in = c_count * g.in_h * g.in_w, image_out = oc_count * g.out_h * g.out_w;
  const auto transform_input = tile == 4 ? transform_input_tiles4<T> : transform_input_tiles2<T>;
  const auto transform_output_grad = tile == 4 ? transform_output_grad_tiles4<T> : transform_output_grad_tiles2<T>;
  const auto untransform = tile == 4 ? untransform_kernel_grads4<T> : untransform_kernel_grads2<T>;
  for_each_group(p, g.batch, [&](int64_t chunk, int64_t first, int64_t count, bool chunk_starts) {
    Scratch<T>& s = chunks[static_cast<size_t>(chunk)];
    if (chunk_starts) s.lay_out(p, scratch.data<T>() + chunk * layout.elements(p));
    for (int64_t image = 0; image < count; ++image) {
      // x into the interior of the zero-bordered plane, dy into the top left of its own
      const int64_t n = first + image;
      const T* next_x = n + 1 < g.batch ? x.data<T>() + (n + 1) * image_in : nullptr;
      channels_last(x.data<T>() + n * image_in, c_count, g.in_h, g.in_w,
                    s.x_plane + (g.pad_h * p.padded_w + g.pad_w) * s.cv, p.padded_w, s.cv, dy.data<T>() + n * image_out);
      transform_input(p, s.x_plane, s.cv, image * p.tiles, s.v_tap, s.v);
      channels_last(dy.data<T>() + n * image_out, oc_count, g.out_h, g.out_w, s.dy_plane, tile * p.tiles_w, s.ov, next_x);
      transform_output_grad(p, s.dy_plane, s.ov, image * p.tiles, s.m_tap, s.dm);
    }
    T* du = partial.data<T>() + chunk * kernel_grads;
    const int64_t columns = count * p.tiles;
    const T beta = chunk_starts ? T(0) : T(1);  // the chunk's first group sets its dU
    for (int64_t k = 0; k < p.taps; ++k)  // dU[k] [OC, C] (+)= dM[k]^T [OC, columns] V[k] [columns, C]
      gemm<T>(oc_count, c_count, columns, {s.dm + k * s.m_tap, s.ov, /*transposed=*/true}, {s.v + k * s.v_tap, s.cv},
              {du + k * oc_count * c_count, c_count, beta});
  });
  // The chunks' dU summed into the first in chunk order, then untransformed, (oc, c) pairs split
  // between the threads (on one thread they had left the other idle: ResNet-20's 64 x 64 layers).
  const int64_t pairs = oc_count * c_count;
  parallel_for(pairs, std::max<int64_t>(1, kParallelGrain / (p.taps * p.chunks)), [&](int64_t i0, int64_t i1) {
    T* total = partial.data<T>();
    for (int64_t chunk = 1; chunk < p.chunks; ++chunk)
      for (int64_t k = 0; k < p.taps; ++k) {
        T* sum = total + k * pairs;
        const T* part = sum + chunk * kernel_grads;
        for (int64_t i = i0; i < i1; ++i) sum[i] += part[i];
      }
    untransform(g, total, dweight.data<T>(), i0, i1);
  });
}

template void conv2d_winograd_weight_grad<float>(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&, int64_t);
template void conv2d_winograd_weight_grad<double>(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&, int64_t);

}  // namespace ember::kernels::cpu
