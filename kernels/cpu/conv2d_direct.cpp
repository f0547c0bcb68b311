// The direct convolution's driver (kernels/cpu/conv2d_direct.h): packs the weights, pads each
// image into per-thread planes, calls the register tiles of the instruction set cpu_isa()
// names, and moves results between the tiles' "wide" rows (Wp columns, of which OW are
// outputs) and NCHW. Images are split into one contiguous range per OpenMP thread, as im2col
// does; the weight gradient keeps one set of vector accumulators per thread and sums the
// threads' results in thread order (deterministic for a given thread count).
#include "kernels/cpu/conv2d_direct.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/simulation.h"
#include "kernels/cpu/conv2d_direct_tiles.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/gemm.h"  // count_product_flops
#include "kernels/cpu/parallel.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels::cpu {
namespace {

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

DirectTileShape tile_shape(int64_t out_channels) {
#ifdef EMBER_X86_KERNELS
  if (cpu_isa() == CpuIsa::avx512) return direct_tile_shape_avx512(out_channels);
  if (cpu_isa() == CpuIsa::avx2) return direct_tile_shape_avx2(out_channels);
#endif
  EMBER_THROW("conv2d_direct: this CPU (or EMBER_CPU_ISA=" << cpu_isa_name(cpu_isa()) << ") has no AVX2 or AVX-512");
}

void run_forward(const DirectForwardTiles& t) {
#ifdef EMBER_X86_KERNELS
  if (cpu_isa() == CpuIsa::avx512) return direct_forward_avx512(t);
  direct_forward_avx2(t);
#endif
}

void run_weight_grad(const DirectWeightGradTiles& t) {
#ifdef EMBER_X86_KERNELS
  if (cpu_isa() == CpuIsa::avx512) return direct_weight_grad_avx512(t);
  direct_weight_grad_avx2(t);
#endif
}

// One image's zero-padded planes [C, Hp, Wp] and where each tap reads them.
struct PaddedPlanes {
  int64_t hp, wp, plane;
  int64_t wide;                  // OH * Wp: the wide pixels, OW of every Wp real
  std::vector<int64_t> offsets;  // per tap (c, kh, kw); taps past the real ones read offset 0
  int64_t max_offset = 0;

  PaddedPlanes(const Conv2dGeometry& g, int64_t taps_padded)
      : hp(g.in_h + 2 * g.pad_h), wp(g.in_w + 2 * g.pad_w), plane(hp * wp), wide(g.out_h * wp),
        offsets(static_cast<size_t>(taps_padded), 0) {
    for (int64_t c = 0; c < g.in_channels; ++c)
      for (int64_t kh = 0; kh < g.kernel_h; ++kh)
        for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
          const int64_t offset = c * plane + kh * g.dilation_h * wp + kw * g.dilation_w;
          offsets[static_cast<size_t>((c * g.kernel_h + kh) * g.kernel_w + kw)] = offset;
          max_offset = std::max(max_offset, offset);
        }
  }
  // Floats a buffer needs when every tap reads `pixels` wide pixels: the last tap's run ends
  // there, past the planes (C * plane <= max_offset + wide), so the slack stays zero.
  int64_t buffer(int64_t pixels) const { return max_offset + pixels; }

  // Copies image [C, H, W] into the planes' interiors; the borders keep the zeros they start with.
  void fill(const Conv2dGeometry& g, const float* image, float* planes) const {
    for (int64_t c = 0; c < g.in_channels; ++c)
      for (int64_t h = 0; h < g.in_h; ++h)
        std::memcpy(planes + c * plane + (h + g.pad_h) * wp + g.pad_w, image + (c * g.in_h + h) * g.in_w,
                    static_cast<size_t>(g.in_w) * sizeof(float));
  }
};

// Calls fn(chunk, first, last) for one contiguous range of images per chunk, on one OpenMP team.
template <class Fn>
void for_each_chunk(int64_t batch, int64_t chunks, const Fn& fn) {
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t chunk = c0; chunk < c1; ++chunk) fn(chunk, batch * chunk / chunks, batch * (chunk + 1) / chunks);
  });
}

int64_t chunks_for(const Conv2dGeometry& g) {
  return std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), g.batch));
}

Tensor workspace(const Shape& shape) {
  CategoryScope scope(MemoryCategory::workspace);
  return empty(shape, TensorOptions().dtype(DType::f32));
}

}  // namespace

bool direct_applies(const Conv2dGeometry& g) {
  return cpu_isa() != CpuIsa::baseline && g.stride_h == 1 && g.stride_w == 1 && g.out_h > 0 && g.out_w > 0 &&
         g.batch > 0 && g.in_channels > 0 && g.out_channels > 0;
}

// Measured with bench_conv (docs/kernels.md): LeNet-5's 5x5 layers (25 and 150 taps) gain in
// both passes; the 3x3 single-channel stems (9 taps) lose, their few taps per output too little
// work to pay for writing the wide rows and moving them to NCHW.
bool direct_pays(const Conv2dGeometry& g) {
  return direct_applies(g) && g.in_channels < 16 && g.col_rows() >= 25 && !g.is_pointwise();
}

void conv2d_direct(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& y) {
  const DirectTileShape s = tile_shape(g.out_channels);
  const int64_t taps = g.col_rows(), oc = g.out_channels, oc_padded = round_up(oc, s.rows);
  const PaddedPlanes planes(g, taps);
  const int64_t pixels = round_up(planes.wide, s.pixel_block), in_len = planes.buffer(pixels);
  const int64_t chunks = chunks_for(g), per_chunk = in_len + oc_padded * pixels;
  const Tensor packed = workspace(Shape{taps, oc_padded});
  const Tensor scratch = workspace(Shape{chunks, per_chunk});
  if (simulating()) return;

  float* w = packed.data<float>();  // [OC][taps] -> [taps][oc_padded], zero past OC
  const float* src = weight.data<float>();
  std::fill(w, w + taps * oc_padded, 0.0f);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t k = 0; k < taps; ++k) w[k * oc_padded + o] = src[o * taps + k];

  const float* b = bias.defined() ? bias.data<float>() : nullptr;
  const int64_t image_in = g.in_channels * g.in_plane(), out_plane = g.out_h * g.out_w;
  count_product_flops(2 * g.batch * oc * taps * out_plane);  // the useful ones, not the padding's
  for_each_chunk(g.batch, chunks, [&](int64_t chunk, int64_t first, int64_t last) {
    float* in = scratch.data<float>() + chunk * per_chunk;
    float* wide = in + in_len;
    std::fill(in, in + in_len, 0.0f);
    const DirectForwardTiles t{in, w, planes.offsets.data(), taps, s.rows, s.pixel_block, oc_padded, pixels, wide};
    for (int64_t n = first; n < last; ++n) {
      planes.fill(g, x.data<float>() + n * image_in, in);
      run_forward(t);
      float* y_n = y.data<float>() + n * oc * out_plane;
      for (int64_t o = 0; o < oc; ++o) {
        const float add = b != nullptr ? b[o] : 0.0f;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const float* from = wide + o * pixels + oh * planes.wp;
          float* to = y_n + o * out_plane + oh * g.out_w;
          for (int64_t ow = 0; ow < g.out_w; ++ow) to[ow] = from[ow] + add;
        }
      }
    }
  });
}

void conv2d_direct_weight_grad(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, const Tensor& dweight) {
  const DirectTileShape s = tile_shape(g.out_channels);
  const int64_t taps = g.col_rows(), taps_padded = round_up(taps, s.tap_block), oc = g.out_channels;
  const int64_t oc_padded = round_up(oc, s.grad_rows), lanes = s.lanes;
  const PaddedPlanes planes(g, taps_padded);
  const int64_t pixels = round_up(planes.wide, lanes), in_len = planes.buffer(pixels);
  const int64_t acc_len = oc_padded * taps_padded * lanes;
  const int64_t chunks = chunks_for(g), per_chunk = in_len + oc_padded * pixels + acc_len;
  const Tensor scratch = workspace(Shape{chunks, per_chunk});
  const Tensor partial = chunks > 1 ? workspace(Shape{chunks, oc, taps}) : dweight;  // chunk 0 is dweight itself
  if (simulating()) return;

  const int64_t image_in = g.in_channels * g.in_plane(), out_plane = g.out_h * g.out_w;
  count_product_flops(2 * g.batch * oc * taps * out_plane);
  for_each_chunk(g.batch, chunks, [&](int64_t chunk, int64_t first, int64_t last) {
    float* in = scratch.data<float>() + chunk * per_chunk;
    float* grad = in + in_len;
    float* acc = grad + oc_padded * pixels;
    std::fill(in, acc + acc_len, 0.0f);
    const DirectWeightGradTiles t{in, grad, planes.offsets.data(), taps_padded, oc_padded, pixels, acc};
    for (int64_t n = first; n < last; ++n) {
      planes.fill(g, x.data<float>() + n * image_in, in);
      const float* dy_n = dy.data<float>() + n * oc * out_plane;
      for (int64_t o = 0; o < oc; ++o)  // the columns past OW and the rows past OC stay zero
        for (int64_t oh = 0; oh < g.out_h; ++oh)
          std::memcpy(grad + o * pixels + oh * planes.wp, dy_n + o * out_plane + oh * g.out_w,
                      static_cast<size_t>(g.out_w) * sizeof(float));
      run_weight_grad(t);
    }
    float* part = partial.data<float>() + chunk * oc * taps;
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t k = 0; k < taps; ++k) {
        const float* lane = acc + (o * taps_padded + k) * lanes;
        float sum = 0.0f;
        for (int64_t l = 0; l < lanes; ++l) sum += lane[l];
        part[o * taps + k] = sum;
      }
  });
  if (chunks > 1) {
    float* out = dweight.data<float>();
    const float* part = partial.data<float>();
    const int64_t size = oc * taps;
    std::copy(part, part + size, out);
    for (int64_t c = 1; c < chunks; ++c)
      for (int64_t i = 0; i < size; ++i) out[i] += part[c * size + i];
  }
}

}  // namespace ember::kernels::cpu
