// Argument checks and output sizes of conv2d and pooling; messages name the op and shapes.
#include "kernels/conv_geometry.h"

#include "core/error.h"

namespace ember::kernels {

namespace {

void check_window_args(const Size2& kernel, const Size2& stride, const Size2& padding, const Size2& dilation,
                       const Shape& x, const char* op) {
  EMBER_CHECK(kernel.h > 0 && kernel.w > 0, op << ": kernel size must be positive, got " << kernel << " for input "
                                                << x);
  EMBER_CHECK(stride.h > 0 && stride.w > 0, op << ": stride must be positive, got " << stride << " for input " << x);
  EMBER_CHECK(padding.h >= 0 && padding.w >= 0,
              op << ": padding must be non-negative, got " << padding << " for input " << x);
  EMBER_CHECK(dilation.h > 0 && dilation.w > 0,
              op << ": dilation must be positive, got " << dilation << " for input " << x);
}

Conv2dGeometry window_geometry(const Shape& x, int64_t out_channels, const Size2& kernel, const Size2& stride,
                               const Size2& padding, const Size2& dilation, const char* op) {
  const int64_t eff_h = dilation.h * (kernel.h - 1) + 1, eff_w = dilation.w * (kernel.w - 1) + 1;
  const int64_t padded_h = x[2] + 2 * padding.h, padded_w = x[3] + 2 * padding.w;
  EMBER_CHECK(eff_h <= padded_h && eff_w <= padded_w,
              op << ": kernel " << kernel << (dilation == Size2(1) ? "" : " (dilated)") << " spans (" << eff_h << ", "
                 << eff_w << "), bigger than the padded input (" << padded_h << ", " << padded_w << ") of " << x);
  Conv2dGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.in_h = x[2];
  g.in_w = x[3];
  g.out_channels = out_channels;
  g.kernel_h = kernel.h;
  g.kernel_w = kernel.w;
  g.stride_h = stride.h;
  g.stride_w = stride.w;
  g.pad_h = padding.h;
  g.pad_w = padding.w;
  g.dilation_h = dilation.h;
  g.dilation_w = dilation.w;
  g.out_h = conv_out_size(g.in_h, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
  g.out_w = conv_out_size(g.in_w, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
  return g;
}

}  // namespace

Conv2dGeometry conv2d_geometry(const Shape& x, const Shape& weight, const Conv2dArgs& args, const char* op) {
  EMBER_CHECK(x.dim() == 4, op << ": expected input [N, C, H, W], got " << x << " (weight " << weight << ")");
  EMBER_CHECK(weight.dim() == 4,
              op << ": expected weight [out_channels, in_channels, KH, KW], got " << weight << " (input " << x << ")");
  EMBER_CHECK(x[1] == weight[1], op << ": input " << x << " has " << x[1] << " channels but weight " << weight
                                    << " expects " << weight[1] << " (groups=1)");
  check_window_args(Size2(weight[2], weight[3]), args.stride, args.padding, args.dilation, x, op);
  return window_geometry(x, weight[0], Size2(weight[2], weight[3]), args.stride, args.padding, args.dilation, op);
}

Conv2dGeometry pool2d_geometry(const Shape& x, const Pool2dArgs& args, const char* op) {
  EMBER_CHECK(x.dim() == 4, op << ": expected input [N, C, H, W], got " << x);
  check_window_args(args.kernel, args.stride, args.padding, Size2(1), x, op);
  EMBER_CHECK(2 * args.padding.h <= args.kernel.h && 2 * args.padding.w <= args.kernel.w,
              op << ": padding " << args.padding << " must be at most half the kernel " << args.kernel
                 << " (input " << x << ")");
  Conv2dGeometry g = window_geometry(x, x[1], args.kernel, args.stride, args.padding, Size2(1), op);
  g.out_h = pool_out_size(g.in_h, g.kernel_h, g.stride_h, g.pad_h, args.ceil_mode);
  g.out_w = pool_out_size(g.in_w, g.kernel_w, g.stride_w, g.pad_w, args.ceil_mode);
  return g;
}

}  // namespace ember::kernels
