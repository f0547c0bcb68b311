// Checked entry points of the CNN kernels (conv2d, pooling, batch norm, dropout);
// the other families are in the other kernels/dispatch_*.cpp.
#include <algorithm>

#include "core/cuda_runtime.h"
#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"
#include "kernels/conv_scratch_cuda.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels {

// --- CNN ops: shapes and args are checked by kernels/conv_geometry.h, which names the op and shapes ---

namespace {

Shape conv_output_shape(const Conv2dGeometry& g) { return Shape{g.batch, g.out_channels, g.out_h, g.out_w}; }

// What max_pool2d and avg_pool2d check and allocate before their kernels: x, the windows, y.
struct PoolOutput {
  Conv2dGeometry g;
  Tensor y;
};
PoolOutput pool_output(const Tensor& x, const Pool2dArgs& args, const char* op) {
  check_defined(x, op, "x");
  check_floating(x, op);
  const Conv2dGeometry g = pool2d_geometry(x.shape(), args, op);
  return {g, empty(conv_output_shape(g), TensorOptions(x.dtype()).device(x.device()))};
}

void check_grad_shape(const Tensor& dy, const Shape& expected, const char* op) {
  check_defined(dy, op, "dy");
  EMBER_CHECK(dy.shape() == expected, op << ": gradient " << dy.shape() << " does not match the output shape "
                                         << expected);
}

// An optional per-channel tensor [C] next to x [N, C, ...] (bias, batch norm weight and statistics).
void check_channel_vector(const Tensor& t, const Tensor& x, int64_t channels, const char* op, const char* arg) {
  if (!t.defined()) return;
  check_floating(t, op);
  check_same_device(t, x, op);
  EMBER_CHECK(t.dim() == 1 && t.size(0) == channels, op << ": '" << arg << "' must be [" << channels << "] for input "
                                                        << x.shape() << ", got " << t.shape());
}

void check_batch_norm_input(const Tensor& x, const char* op) {
  check_defined(x, op, "x");
  check_floating(x, op);
  EMBER_CHECK(x.dim() >= 2, op << ": expected input [N, C, ...], got " << x.shape());
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dArgs& args) {
  check_defined(x, "conv2d", "x");
  check_defined(weight, "conv2d", "weight");
  check_floating(x, "conv2d");
  check_compatible(x, weight, "conv2d");
  const Conv2dGeometry g = conv2d_geometry(x.shape(), weight.shape(), args, "conv2d");
  if (bias.defined()) check_compatible(x, bias, "conv2d");
  check_channel_vector(bias, x, g.out_channels, "conv2d", "bias");
  OpNameScope scope("conv2d");
  Tensor y = empty(conv_output_shape(g), TensorOptions(x.dtype()).device(x.device()));
  if (y.numel() > 0) {
    if (simulating() && x.is_cuda()) simulate_cuda_conv_scratch(CudaConvPass::forward, g, x.dtype(), x.device());
    EMBER_BACKEND_WITH_SCRATCH(x.device(), conv2d, x, weight, bias, g, y);
  }
  return y;
}

Tensor conv2d_backward_input(const Tensor& dy, const Tensor& weight, const Shape& x_shape, const Conv2dArgs& args) {
  const Conv2dGeometry g = conv2d_geometry(x_shape, weight.shape(), args, "conv2d_backward_input");
  check_grad_shape(dy, conv_output_shape(g), "conv2d_backward_input");
  check_compatible(dy, weight, "conv2d_backward_input");
  OpNameScope scope("conv2d_backward_input");
  Tensor dx = empty(x_shape, TensorOptions(dy.dtype()).device(dy.device()));
  if (dx.numel() == 0) return dx;
  if (g.out_channels == 0 || g.col_cols() == 0) EMBER_BACKEND(dx.device(), fill_, dx, 0.0);  // an empty sum
  else {
    if (simulating() && dy.is_cuda()) simulate_cuda_conv_scratch(CudaConvPass::input_grad, g, dy.dtype(), dy.device());
    EMBER_BACKEND_WITH_SCRATCH(dy.device(), conv2d_backward_input, dy, weight, g, dx);
  }
  return dx;
}

Tensor conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Shape& weight_shape, const Conv2dArgs& args) {
  check_defined(x, "conv2d_backward_weight", "x");
  const Conv2dGeometry g = conv2d_geometry(x.shape(), weight_shape, args, "conv2d_backward_weight");
  check_grad_shape(dy, conv_output_shape(g), "conv2d_backward_weight");
  check_compatible(x, dy, "conv2d_backward_weight");
  OpNameScope scope("conv2d_backward_weight");
  Tensor dw = empty(weight_shape, TensorOptions(x.dtype()).device(x.device()));
  if (dw.numel() == 0) return dw;
  if (g.batch == 0 || g.col_cols() == 0) EMBER_BACKEND(dw.device(), fill_, dw, 0.0);  // an empty sum
  else {
    if (simulating() && x.is_cuda()) simulate_cuda_conv_scratch(CudaConvPass::weight_grad, g, x.dtype(), x.device());
    EMBER_BACKEND_WITH_SCRATCH(x.device(), conv2d_backward_weight, x, dy, g, dw);
  }
  return dw;
}

Tensor conv2d_backward_bias(const Tensor& dy) {
  check_defined(dy, "conv2d_backward_bias", "dy");
  check_floating(dy, "conv2d_backward_bias");
  EMBER_CHECK(dy.dim() == 4, "conv2d_backward_bias: expected dy [N, OC, OH, OW], got " << dy.shape());
  OpNameScope scope("conv2d_backward_bias");
  Tensor db = empty(Shape{dy.size(1)}, TensorOptions(dy.dtype()).device(dy.device()));
  if (db.numel() == 0) return db;
  if (dy.numel() == 0) EMBER_BACKEND(db.device(), fill_, db, 0.0);  // an empty sum
  else EMBER_BACKEND(dy.device(), conv2d_backward_bias, dy, db);
  return db;
}

Tensor max_pool2d(const Tensor& x, const Pool2dArgs& args) {
  OpNameScope scope("max_pool2d");
  const PoolOutput out = pool_output(x, args, "max_pool2d");
  if (out.y.numel() > 0) EMBER_BACKEND(x.device(), max_pool2d, x, out.g, out.y);
  return out.y;
}

Tensor max_pool2d_backward(const Tensor& dy, const Tensor& x, const Pool2dArgs& args) {
  check_defined(x, "max_pool2d_backward", "x");
  check_floating(x, "max_pool2d_backward");
  const Conv2dGeometry g = pool2d_geometry(x.shape(), args, "max_pool2d_backward");
  check_grad_shape(dy, conv_output_shape(g), "max_pool2d_backward");
  check_compatible(dy, x, "max_pool2d_backward");
  OpNameScope scope("max_pool2d_backward");
  Tensor dx = empty(x.shape(), TensorOptions(dy.dtype()).device(dy.device()));
  if (dx.numel() > 0) EMBER_BACKEND(dy.device(), max_pool2d_backward, dy, x, g, dx);  // zeros dx itself
  return dx;
}

Tensor avg_pool2d(const Tensor& x, const Pool2dArgs& args) {
  OpNameScope scope("avg_pool2d");
  const PoolOutput out = pool_output(x, args, "avg_pool2d");
  if (out.y.numel() > 0) EMBER_BACKEND(x.device(), avg_pool2d, x, out.g, args.count_include_pad, out.y);
  return out.y;
}

Tensor avg_pool2d_backward(const Tensor& dy, const Shape& x_shape, const Pool2dArgs& args) {
  const Conv2dGeometry g = pool2d_geometry(x_shape, args, "avg_pool2d_backward");
  check_grad_shape(dy, conv_output_shape(g), "avg_pool2d_backward");
  check_floating(dy, "avg_pool2d_backward");
  OpNameScope scope("avg_pool2d_backward");
  Tensor dx = empty(x_shape, TensorOptions(dy.dtype()).device(dy.device()));
  if (dx.numel() > 0) EMBER_BACKEND(dy.device(), avg_pool2d_backward, dy, g, args.count_include_pad, dx);
  return dx;
}

void batch_norm_stats(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, double momentum,
                      double eps, Tensor* mean, Tensor* invstd) {
  check_batch_norm_input(x, "batch_norm");
  const int64_t channels = x.size(1);
  EMBER_CHECK(x.numel() / std::max<int64_t>(1, channels) > 1,
              "batch_norm: expected more than 1 value per channel when training, got input " << x.shape());
  EMBER_CHECK(eps > 0.0, "batch_norm: eps must be positive, got " << eps);
  check_channel_vector(running_mean, x, channels, "batch_norm", "running_mean");
  check_channel_vector(running_var, x, channels, "batch_norm", "running_var");
  OpNameScope scope("batch_norm");
  const TensorOptions stats = TensorOptions(batch_norm_stats_dtype(x.dtype())).device(x.device());
  *mean = empty(Shape{channels}, stats);
  *invstd = empty(Shape{channels}, stats);
  if (channels == 0) return;
  bump_version(running_mean, running_var);  // updated in place when defined (undefined ones are skipped)
  EMBER_BACKEND(x.device(), batch_norm_stats, x, running_mean, running_var, momentum, eps, *mean, *invstd);
}

Tensor batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& weight,
                        const Tensor& bias, bool relu, const Tensor& residual) {
  check_batch_norm_input(x, "batch_norm");
  const int64_t channels = x.size(1);
  check_defined(mean, "batch_norm", "mean");
  check_defined(invstd, "batch_norm", "invstd");
  check_channel_vector(mean, x, channels, "batch_norm", "mean");
  check_channel_vector(invstd, x, channels, "batch_norm", "invstd");
  check_channel_vector(weight, x, channels, "batch_norm", "weight");
  check_channel_vector(bias, x, channels, "batch_norm", "bias");
  if (residual.defined()) {
    check_same_shape(x, residual, "batch_norm_add_relu");
    check_compatible(x, residual, "batch_norm_add_relu");
  }
  OpNameScope scope("batch_norm");
  Tensor y = empty_like(x);
  if (y.numel() > 0) EMBER_BACKEND(x.device(), batch_norm_apply, x, mean, invstd, weight, bias, relu, residual, y);
  return y;
}

void batch_norm_backward(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                         const Tensor& weight, bool batch_stats, Tensor* dx, Tensor* dweight, Tensor* dbias,
                         const Tensor& bias, bool relu) {
  check_batch_norm_input(x, "batch_norm_backward");
  check_same_shape(x, dy, "batch_norm_backward");
  check_compatible(x, dy, "batch_norm_backward");
  const int64_t channels = x.size(1);
  check_defined(mean, "batch_norm_backward", "mean");
  check_defined(invstd, "batch_norm_backward", "invstd");
  check_channel_vector(mean, x, channels, "batch_norm_backward", "mean");
  check_channel_vector(invstd, x, channels, "batch_norm_backward", "invstd");
  check_channel_vector(weight, x, channels, "batch_norm_backward", "weight");
  check_channel_vector(bias, x, channels, "batch_norm_backward", "bias");
  OpNameScope scope("batch_norm_backward");
  const TensorOptions params = TensorOptions(weight.defined() ? weight.dtype() : x.dtype()).device(x.device());
  if (dx) *dx = empty_like(x);
  if (dweight) *dweight = empty(Shape{channels}, params);
  if (dbias) *dbias = empty(Shape{channels}, params);
  if (channels == 0) return;
  EMBER_BACKEND(x.device(), batch_norm_backward, x, dy, mean, invstd, weight, bias, relu, batch_stats,
                dx ? *dx : Tensor(), dweight ? *dweight : Tensor(), dbias ? *dbias : Tensor());
}

Tensor dropout(const Tensor& x, double p, GeneratorState state, int64_t group) {
  check_defined(x, "dropout", "x");
  check_floating(x, "dropout");
  EMBER_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability must be in [0, 1], got " << p << " for " << x.shape());
  EMBER_CHECK(group >= 1 && x.numel() % group == 0,
              "dropout: groups of " << group << " elements that share a draw do not tile " << x.shape());
  OpNameScope scope("dropout");
  Tensor y = empty_like(x);
  if (y.numel() > 0) EMBER_BACKEND(x.device(), dropout, x, p, state, group, y);
  return y;
}

}  // namespace ember::kernels
