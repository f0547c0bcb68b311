#pragma once
// Geometry of 2-D convolution and pooling over NCHW tensors, shared by the CPU
// and CUDA backends: output sizes, argument checks, and the EMBER_HD index math
// of im2col / col2im and pooling windows, so both backends cannot drift.
//
//   kernels::Conv2dArgs args;  args.stride = 2;  args.padding = 1;
//   Conv2dGeometry g = conv2d_geometry(x.shape(), w.shape(), args, "conv2d");   // throws naming op + shapes
//   // im2col row r = (c*KH + kh)*KW + kw, column p = oh*OW + ow:
//   int64_t src = im2col_source(g, r, p);   // offset of x[c][ih][iw] in one image, or -1 (padding)
#include <cstdint>
#include <ostream>

#include "core/hd.h"
#include "core/shape.h"

namespace ember {

// A (height, width) pair; one number means the same for both: Size2(3) == Size2(3, 3).
struct Size2 {
  int64_t h = 0, w = 0;
  constexpr Size2() = default;
  constexpr Size2(int64_t both) : h(both), w(both) {}  // NOLINT: implicit on purpose (conv2d(x, w, b, 2))
  constexpr Size2(int64_t height, int64_t width) : h(height), w(width) {}
  constexpr bool operator==(const Size2& o) const { return h == o.h && w == o.w; }
};
inline std::ostream& operator<<(std::ostream& os, const Size2& s) { return os << "(" << s.h << ", " << s.w << ")"; }

namespace kernels {

struct Conv2dArgs {
  Size2 stride{1};
  Size2 padding{0};
  Size2 dilation{1};
};

struct Pool2dArgs {
  Size2 kernel{1};
  Size2 stride{1};
  Size2 padding{0};
  bool ceil_mode = false;          // output size rounded up (pool_out_size), PyTorch's ceil_mode
  bool count_include_pad = true;   // average pooling's divisor counts the zero padding (pool_divisor)
};

// Everything an im2col/col2im or pooling loop needs, as plain integers (passed by value to CUDA kernels).
struct Conv2dGeometry {
  int64_t batch = 0, in_channels = 0, in_h = 0, in_w = 0;
  int64_t out_channels = 0, kernel_h = 1, kernel_w = 1;
  int64_t out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;

  EMBER_HD int64_t col_rows() const { return in_channels * kernel_h * kernel_w; }  // GEMM depth
  EMBER_HD int64_t col_cols() const { return out_h * out_w; }                      // output pixels
  EMBER_HD int64_t in_plane() const { return in_h * in_w; }
  // A 1x1 kernel with stride 1 and no padding: the image itself is its im2col matrix.
  EMBER_HD bool is_pointwise() const {
    return kernel_h == 1 && kernel_w == 1 && stride_h == 1 && stride_w == 1 && pad_h == 0 && pad_w == 0;
  }
};

// floor((in + 2*pad - dilation*(kernel-1) - 1) / stride) + 1, PyTorch's formula (may be <= 0 for bad args).
EMBER_HD int64_t conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// Checks x [N, C, H, W] against weight [OC, C, KH, KW] and the args; throws ember::Error naming
// `op` and both shapes (channel mismatch, kernel bigger than the padded input, bad stride...).
Conv2dGeometry conv2d_geometry(const Shape& x, const Shape& weight, const Conv2dArgs& args, const char* op);
// PyTorch's pooling output size (pooling_output_shape, dilation 1):
// floor or, with ceil_mode, ceil of (in + 2 pad - kernel) / stride, plus 1; with ceil_mode the last
// window must start inside the input or its left padding, else it is dropped. in + 2 pad >= kernel.
EMBER_HD int64_t pool_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode) {
  int64_t out = (in + 2 * pad - kernel + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Checks x [N, C, H, W] and the pooling args (padding at most half the kernel, like PyTorch).
// out_channels = C; the kernel is the pooling window, dilation 1; the output size is pool_out_size's.
Conv2dGeometry pool2d_geometry(const Shape& x, const Pool2dArgs& args, const char* op);

// im2col: offset of the input element that column-matrix entry (row, col) reads within one
// image [C, H, W], or -1 when it falls in the zero padding.
EMBER_HD int64_t im2col_source(const Conv2dGeometry& g, int64_t row, int64_t col) {
  const int64_t kw = row % g.kernel_w;
  const int64_t kh = (row / g.kernel_w) % g.kernel_h;
  const int64_t c = row / (g.kernel_w * g.kernel_h);
  const int64_t ow = col % g.out_w, oh = col / g.out_w;
  const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
  const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
  if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) return -1;
  return (c * g.in_h + ih) * g.in_w + iw;
}

// col2im as a gather (one output per thread on CUDA): the sum of every column-matrix entry
// that im2col copied from input element (c, ih, iw). `cols` is one image's [C*KH*KW, OH*OW].
template <class T, class Acc>
EMBER_HD Acc col2im_gather(const Conv2dGeometry& g, const T* cols, int64_t c, int64_t ih, int64_t iw) {
  Acc sum = Acc(0);
  const int64_t ncols = g.col_cols();
  for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
    const int64_t h_num = ih + g.pad_h - kh * g.dilation_h;  // = oh * stride_h when this tap hits
    if (h_num < 0 || h_num % g.stride_h != 0 || h_num / g.stride_h >= g.out_h) continue;
    const int64_t oh = h_num / g.stride_h;
    for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
      const int64_t w_num = iw + g.pad_w - kw * g.dilation_w;
      if (w_num < 0 || w_num % g.stride_w != 0 || w_num / g.stride_w >= g.out_w) continue;
      const int64_t row = (c * g.kernel_h + kh) * g.kernel_w + kw;
      sum += Acc(cols[row * ncols + oh * g.out_w + w_num / g.stride_w]);
    }
  }
  return sum;
}

// A pooling window along one axis: [begin, end) clamped to the input, and the divisor span
// that average pooling uses with count_include_pad=true (PyTorch: the window clipped to the
// padded input, before clamping to the real one; with ceil_mode the last window may reach past
// the padding, and is clipped to it as well).
struct PoolWindow {
  int64_t begin, end, padded_span;
};

EMBER_HD PoolWindow pool_window(int64_t out_index, int64_t in_size, int64_t kernel, int64_t stride, int64_t pad) {
  int64_t begin = out_index * stride - pad;
  int64_t end = begin + kernel < in_size + pad ? begin + kernel : in_size + pad;
  const int64_t padded_span = end - begin;
  begin = begin < 0 ? 0 : begin;
  end = end > in_size ? in_size : end;
  return PoolWindow{begin, end, padded_span};
}

// Average pooling's divisor for the window of rows h and columns w: with count_include_pad the
// window clipped to the padded input (PyTorch's default), else only the input elements it holds
// (PyTorch's count_include_pad=False). Never 0: every window holds an input element.
EMBER_HD int64_t pool_divisor(const PoolWindow& h, const PoolWindow& w, bool count_include_pad) {
  return count_include_pad ? h.padded_span * w.padded_span : (h.end - h.begin) * (w.end - w.begin);
}

}  // namespace kernels
}  // namespace ember
