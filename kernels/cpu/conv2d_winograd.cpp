// Winograd F(2x2, 3x3) on the CPU; the method and its error are in conv2d_winograd.h.
// Layout: U [16][OC][C] (all kernels, once per call), and per thread V [16][C][cols] and
// M [16][OC][cols], where a column is one 4x4 tile of one image of the thread's current
// group of images. The weight gradient runs the same steps backwards (each transform's
// adjoint): dM = A dy A^T per tile, dU[k] = sum over columns of dM[k] V[k]^T (16 GEMMs
// per group, accumulated per thread), dweight = G^T dU G. Threads take contiguous ranges of groups (one OpenMP team for the op);
// the GEMMs inside run single-threaded (OpenBLAS checks omp_in_parallel).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593 in Eigen's AVX-512 code
#endif
#include "kernels/cpu/conv2d_winograd.h"

#include <Eigen/Core>

#include <algorithm>

#include "core/simulation.h"
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
constexpr int64_t kTapSkew = 16;

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct WinogradPlan {
  int64_t tiles_h, tiles_w, tiles;  // per image
  int64_t group;                    // images per GEMM
  int64_t groups, chunks;           // groups in the batch; thread chunks (one scratch each)
  int64_t columns;                  // tiles * group
  int64_t padded_h, padded_w;       // an input plane with its padding, covering every tile
  int64_t v_tap, m_tap;             // elements from one tap's block of V (M) to the next
  int64_t scratch;                  // elements of V, M and the padded plane for one chunk
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
  p.scratch = kTaps * (p.v_tap + p.m_tap) + p.padded_h * p.padded_w;
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

// V[k][c][column] = (B^T d B)[k] for the 4x4 tile d of every column. Each input plane is first
// copied into `padded` (p.padded_h x p.padded_w, zero outside the plane: the caller zeroes it
// once, and the copies only ever write its interior), so no tile needs a bounds check.
template <class T>
void transform_tiles(const Conv2dGeometry& g, const WinogradPlan& p, const T* images, int64_t count, T* padded, T* v) {
  const int64_t c_count = g.in_channels, h = g.in_h, w = g.in_w, stride = p.v_tap, pw = p.padded_w;
  for (int64_t image = 0; image < count; ++image)
    for (int64_t c = 0; c < c_count; ++c) {
      const T* plane = images + (image * c_count + c) * h * w;
      for (int64_t row = 0; row < h; ++row)
        std::copy(plane + row * w, plane + (row + 1) * w, padded + (row + g.pad_h) * pw + g.pad_w);
      T* out = v + c * p.columns + image * p.tiles;
      for (int64_t th = 0; th < p.tiles_h; ++th)
        for (int64_t tw = 0; tw < p.tiles_w; ++tw) {
          const T* d0 = padded + 2 * th * pw + 2 * tw;
          T d[4][4];
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) d[i][j] = d0[i * pw + j];
          T a[4][4];  // B^T d
          for (int j = 0; j < 4; ++j) {
            a[0][j] = d[0][j] - d[2][j];
            a[1][j] = d[1][j] + d[2][j];
            a[2][j] = d[2][j] - d[1][j];
            a[3][j] = d[1][j] - d[3][j];
          }
          T* o = out + th * p.tiles_w + tw;
          for (int i = 0; i < 4; ++i) {  // (B^T d) B
            o[(4 * i + 0) * stride] = a[i][0] - a[i][2];
            o[(4 * i + 1) * stride] = a[i][1] + a[i][2];
            o[(4 * i + 2) * stride] = a[i][2] - a[i][1];
            o[(4 * i + 3) * stride] = a[i][1] - a[i][3];
          }
        }
    }
}

// y = A^T M A + bias for every column's tile, clipped to the output plane.
template <class T>
void untransform_tiles(const Conv2dGeometry& g, const WinogradPlan& p, const T* m, const T* bias, int64_t count,
                       T* out_images) {
  const int64_t oc_count = g.out_channels, oh_count = g.out_h, ow_count = g.out_w, stride = p.m_tap;
  for (int64_t image = 0; image < count; ++image)
    for (int64_t oc = 0; oc < oc_count; ++oc) {
      T* plane = out_images + (image * oc_count + oc) * oh_count * ow_count;
      const T* in = m + oc * p.columns + image * p.tiles;
      const T b = bias != nullptr ? bias[oc] : T(0);
      for (int64_t th = 0; th < p.tiles_h; ++th)
        for (int64_t tw = 0; tw < p.tiles_w; ++tw) {
          const T* t = in + th * p.tiles_w + tw;
          T s[2][4];  // A^T m
          for (int j = 0; j < 4; ++j) {
            const T m0 = t[j * stride], m1 = t[(4 + j) * stride], m2 = t[(8 + j) * stride], m3 = t[(12 + j) * stride];
            s[0][j] = m0 + m1 + m2;
            s[1][j] = m1 - m2 - m3;
          }
          const int64_t oh0 = 2 * th, ow0 = 2 * tw;
          for (int i = 0; i < 2 && oh0 + i < oh_count; ++i) {  // (A^T m) A
            T* row = plane + (oh0 + i) * ow_count + ow0;
            row[0] = s[i][0] + s[i][1] + s[i][2] + b;
            if (ow0 + 1 < ow_count) row[1] = s[i][1] - s[i][2] - s[i][3] + b;
          }
        }
    }
}

// Y[k][oc][column] = (A dy A^T)[k] for the 2x2 output-gradient block of every column (zero
// past the plane's edge): the adjoint of untransform_tiles.
template <class T>
void transform_output_grads(const Conv2dGeometry& g, const WinogradPlan& p, const T* grads, int64_t count, T* out) {
  const int64_t oc_count = g.out_channels, oh_count = g.out_h, ow_count = g.out_w, stride = p.m_tap;
  for (int64_t image = 0; image < count; ++image)
    for (int64_t oc = 0; oc < oc_count; ++oc) {
      const T* plane = grads + (image * oc_count + oc) * oh_count * ow_count;
      T* o = out + oc * p.columns + image * p.tiles;
      for (int64_t th = 0; th < p.tiles_h; ++th)
        for (int64_t tw = 0; tw < p.tiles_w; ++tw) {
          const int64_t oh0 = 2 * th, ow0 = 2 * tw;
          const bool down = oh0 + 1 < oh_count, right = ow0 + 1 < ow_count;
          const T* row0 = plane + oh0 * ow_count + ow0;
          const T d00 = row0[0], d01 = right ? row0[1] : T(0);
          const T d10 = down ? row0[ow_count] : T(0), d11 = down && right ? row0[ow_count + 1] : T(0);
          const T r[4][2] = {{d00, d01}, {d00 + d10, d01 + d11}, {d00 - d10, d01 - d11}, {-d10, -d11}};  // A dy
          T* t = o + th * p.tiles_w + tw;
          for (int i = 0; i < 4; ++i) {  // (A dy) A^T
            t[(4 * i + 0) * stride] = r[i][0];
            t[(4 * i + 1) * stride] = r[i][0] + r[i][1];
            t[(4 * i + 2) * stride] = r[i][0] - r[i][1];
            t[(4 * i + 3) * stride] = -r[i][1];
          }
        }
    }
}

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
    scratch = empty(Shape{p.chunks, p.scratch}, TensorOptions().dtype(x.dtype()));
  }
  if (simulating()) return;
  T* u = kernels_u.data<T>();
  transform_kernels(g, weight.data<T>(), u);
  const T* b = bias.defined() ? bias.data<T>() : nullptr;
  const int64_t image_in = c_count * g.in_h * g.in_w, image_out = oc_count * g.out_h * g.out_w;
  parallel_for(p.chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t chunk = c0; chunk < c1; ++chunk) {
      T* v = scratch.data<T>() + chunk * p.scratch;
      T* m = v + kTaps * p.v_tap;
      T* padded = m + kTaps * p.m_tap;
      std::fill(padded, padded + p.padded_h * p.padded_w, T(0));
      const int64_t last = p.groups * (chunk + 1) / p.chunks;
      for (int64_t group = p.groups * chunk / p.chunks; group < last; ++group) {
        const int64_t first = group * p.group, count = std::min(p.group, g.batch - first);
        const int64_t columns = count * p.tiles;  // the last group may be short
        transform_tiles(g, p, x.data<T>() + first * image_in, count, padded, v);
        for (int64_t k = 0; k < kTaps; ++k) {
          // V and M keep p.columns as their row stride, so a short group uses the left columns.
          using Stride = Eigen::OuterStride<>;
          Eigen::Map<const RowMatrix<T>> uk(u + k * oc_count * c_count, oc_count, c_count);
          Eigen::Map<const RowMatrix<T>, 0, Stride> vk(v + k * p.v_tap, c_count, columns, Stride(p.columns));
          Eigen::Map<RowMatrix<T>, 0, Stride> mk(m + k * p.m_tap, oc_count, columns, Stride(p.columns));
          mk.noalias() = uk * vk;
        }
        untransform_tiles(g, p, m, b, count, y.data<T>() + first * image_out);
      }
    }
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
    scratch = empty(Shape{p.chunks, p.scratch}, TensorOptions().dtype(x.dtype()));
  }
  if (simulating()) return;
  const int64_t image_in = c_count * g.in_h * g.in_w, image_out = oc_count * g.out_h * g.out_w;
  parallel_for(p.chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t chunk = c0; chunk < c1; ++chunk) {
      T* v = scratch.data<T>() + chunk * p.scratch;
      T* dm = v + kTaps * p.v_tap;
      T* padded = dm + kTaps * p.m_tap;
      std::fill(padded, padded + p.padded_h * p.padded_w, T(0));
      T* du = partial.data<T>() + chunk * kernel_grads;
      std::fill(du, du + kernel_grads, T(0));
      const int64_t last = p.groups * (chunk + 1) / p.chunks;
      for (int64_t group = p.groups * chunk / p.chunks; group < last; ++group) {
        const int64_t first = group * p.group, count = std::min(p.group, g.batch - first);
        const int64_t columns = count * p.tiles;
        transform_tiles(g, p, x.data<T>() + first * image_in, count, padded, v);
        transform_output_grads(g, p, dy.data<T>() + first * image_out, count, dm);
        for (int64_t k = 0; k < kTaps; ++k) {
          using Stride = Eigen::OuterStride<>;
          Eigen::Map<const RowMatrix<T>, 0, Stride> vk(v + k * p.v_tap, c_count, columns, Stride(p.columns));
          Eigen::Map<const RowMatrix<T>, 0, Stride> dmk(dm + k * p.m_tap, oc_count, columns,
                                                        Stride(p.columns));
          Eigen::Map<RowMatrix<T>> duk(du + k * oc_count * c_count, oc_count, c_count);
          duk.noalias() += dmk * vk.transpose();
        }
      }
    }
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
