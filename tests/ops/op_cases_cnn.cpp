// CNN ops: conv2d, max/avg/global pooling, batch norm (training, eval, running statistics), dropout.
#include <algorithm>
#include <sstream>
#include <vector>

#include "core/generator.h"
#include "kernels/conv_geometry.h"
#include "tests/ops/op_case.h"
#include "tests/support/winograd_magnitude.h"

namespace ember::test {
namespace {

struct ConvShape {
  Shape x, w;
  Size2 stride, padding, dilation;
};

// Strides 1/2, padding 0-2, dilation 1/2, odd and non-square sizes, batch 1-3, 1x1 kernels with
// and without the pointwise shortcut, more channels than one GEMM tile, and empty batches.
const std::vector<ConvShape> kConvs = {
    {{1, 1, 5, 5}, {1, 1, 3, 3}, 1, 0, 1},          {{3, 2, 7, 5}, {4, 2, 3, 3}, 1, 1, 1},
    {{3, 3, 7, 5}, {2, 3, 3, 2}, 2, 1, 1},          {{2, 2, 9, 8}, {3, 2, 3, 3}, 1, 2, 2},
    {{3, 4, 6, 6}, {5, 4, 1, 1}, 1, 0, 1},          {{2, 3, 6, 7}, {2, 3, 1, 1}, 2, 0, 1},
    {{1, 2, 8, 8}, {3, 2, 5, 5}, 1, 2, 1},          {{3, 2, 7, 9}, {3, 2, 3, 3}, {2, 1}, {0, 2}, {1, 2}},
    {{2, 16, 12, 12}, {70, 16, 3, 3}, 1, 1, 1},     {{0, 3, 5, 5}, {2, 3, 3, 3}, 1, 1, 1},
    {{2, 2, 5, 5}, {0, 2, 3, 3}, 1, 1, 1},  // no output channels
    {{2, 0, 5, 5}, {3, 0, 3, 3}, 1, 1, 1},  // no input channels: y is the bias, the weight gradient empty
};

struct PoolShape {
  Shape x;
  Size2 kernel, stride, padding;
};
const std::vector<PoolShape> kPools = {
    {{2, 3, 8, 8}, 2, 2, 0}, {{2, 3, 9, 7}, 3, 2, 1}, {{1, 2, 6, 5}, 3, 1, 1},  // 3x3/1: overlapping windows
    {{2, 2, 7, 9}, {2, 3}, {1, 2}, {1, 1}}, {{1, 1, 1, 1}, 1, 1, 0}, {{0, 3, 4, 4}, 2, 2, 0},
};

std::string geometry(const Size2& stride, const Size2& padding) {
  std::ostringstream s;
  s << " stride " << stride << " padding " << padding;
  return s.str();
}

// The longest sum of conv2d and its backward: C kh kw products per output, up to OC kh kw
// contributions per input pixel, N OH OW per weight and bias entry.
int64_t longest_conv_sum(const ConvShape& c) {
  const kernels::Conv2dArgs args{c.stride, c.padding, c.dilation};
  const kernels::Conv2dGeometry g = kernels::conv2d_geometry(c.x, c.w, args, "test");
  const int64_t taps = g.kernel_h * g.kernel_w;
  return std::max({g.in_channels * taps, g.out_channels * taps, g.batch * g.out_h * g.out_w, int64_t{1}});
}

// The CPU runs Winograd F(2x2, 3x3) or F(4x4, 3x3) for 3x3 stride-1 layers (EMBER_CPU_CONV
// picks which, and auto by the layer): its transforms' terms are larger than the convolution's
// own (tests/support/winograd_magnitude.h), so those layers take the largest of the magnitudes,
// for y, the weight gradient and (padding 1: the input gradient as a flipped convolution) the
// input gradient. Winograd's sums are C + 22, N * tiles + 12 (F(4x4): + 23) and OC + 22 long.
bool winograd_may_run(const ConvShape& c) {
  return c.w.dim() == 4 && c.w[2] == 3 && c.w[3] == 3 && c.stride == Size2(1) && c.dilation == Size2(1) &&
         c.x.numel() > 0 && c.w.numel() > 0;
}

int64_t longest_winograd_sum(const ConvShape& c) {
  const int64_t oh = c.x[2] + 2 * c.padding.h - 2, ow = c.x[3] + 2 * c.padding.w - 2;
  return std::max({winograd_forward_terms(c.x[1], 4), winograd_forward_terms(c.w[0], 4),
                   winograd_weight_grad_terms(c.x[0] * ((oh + 1) / 2) * ((ow + 1) / 2), 2),
                   winograd_weight_grad_terms(c.x[0] * ((oh + 3) / 4) * ((ow + 3) / 4), 4)});
}

OpCase conv_case(const std::string& name, std::vector<InputSpec> inputs, const ConvShape& c, bool bias) {
  OpCase k("cnn", name, std::move(inputs), [c, bias](const Inputs& in) {
    return conv2d(in[0], in[1], bias ? in[2] : Tensor(), c.stride, c.padding, c.dilation);
  });
  k.sums(longest_conv_sum(c)).abs_magnitude();
  if (!winograd_may_run(c)) return k;
  k.sums(std::max(longest_conv_sum(c), longest_winograd_sum(c)));
  return k.magnitudes([c, bias](const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
    const Tensor x = abs(in[0]), weight = abs(in[1]);
    for (int64_t tile : {2, 4}) m[0] = elementwise_max(m[0], winograd_forward_magnitude(x, weight, bias ? abs(in[2]) : Tensor(), c.padding, tile));
    if (!w.defined()) return m;
    if (m[2].defined())
      for (int64_t tile : {2, 4}) m[2] = elementwise_max(m[2], winograd_weight_grad_magnitude(x, abs(w), c.padding, tile));
    if (m[1].defined() && c.padding == Size2(1))
      for (int64_t tile : {2, 4}) m[1] = elementwise_max(m[1], winograd_input_grad_magnitude(abs(w), weight, tile));
    return m;
  });
}

// Batch norm in training sums N * H * W values per channel for the mean and the variance, and
// its gradient cancels: dx = gamma / sigma (w - mean(w) - xhat mean(w xhat)). The magnitudes are
// those expressions with |.| and |xhat| + 1 for xhat (the + 1: the mean's and variance's own
// rounding, relative to sigma): y |gamma| (|xhat| + 1) + |beta|, dx |gamma| / sigma (|w| + mean|w|
// + (|xhat| + 1) mean(|w| (|xhat| + 1))), dgamma sum |w| (|xhat| + 1), dbeta sum |w|.
std::vector<Tensor> batch_norm_magnitudes(const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
  const Tensor& x = in[0];
  const int64_t n = x.shape()[0], c = x.shape()[1], l = n * c == 0 ? 1 : x.numel() / (n * c);
  const double count = static_cast<double>(n * l);
  auto channel_mean = [count](const Tensor& t) { return div(sum(sum(t, 0, true), 2, true), count); };  // [1, C, 1]
  auto channel_sum = [c](const Tensor& t) { return reshape(sum(sum(t, 0, true), 2, true), {c}); };     // [C]
  const Tensor x3 = reshape(x, {n, c, l});
  const Tensor centered = sub(x3, channel_mean(x3));
  const Tensor sigma = sqrt(add(channel_mean(mul(centered, centered)), 1e-5));
  const Tensor xhat1 = add(abs(div(centered, sigma)), 1.0);
  const bool affine = in.size() > 1;
  const Tensor gamma = affine ? abs(reshape(in[1], {1, c, 1})) : ones({1, c, 1}, TensorOptions(DType::f64));
  Tensor y = mul(gamma, xhat1);
  if (affine) y = add(y, abs(reshape(in[2], {1, c, 1})));
  m[0] = reshape(y, x.shape());
  if (!w.defined()) return m;
  const Tensor aw = abs(reshape(w, {n, c, l}));
  const Tensor spread = add(add(aw, channel_mean(aw)), mul(xhat1, channel_mean(mul(aw, xhat1))));
  m[1] = reshape(mul(div(gamma, sigma), spread), x.shape());
  if (affine) {
    m[2] = channel_sum(mul(aw, xhat1));
    m[3] = channel_sum(aw);
  }
  return m;
}

// Batch norm in eval is affine in x: y = gamma (x - running_mean) / sigma + beta, sigma =
// sqrt(running_var + eps). The magnitudes: |gamma| (|x| + |rm|) / sigma + |beta|; dx |w| |gamma| /
// sigma; dgamma sum |w| |x - rm| / sigma and dbeta sum |w| over N H W.
std::vector<Tensor> batch_norm_eval_magnitudes(const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
  const Tensor& x = in[0];
  const int64_t n = x.shape()[0], c = x.shape()[1], l = n * c == 0 ? 1 : x.numel() / (n * c);
  auto channel = [c](const Tensor& t) { return reshape(t, {1, c, 1}); };
  auto channel_sum = [c](const Tensor& t) { return reshape(sum(sum(t, 0, true), 2, true), {c}); };
  const Tensor x3 = reshape(x, {n, c, l}), gamma = abs(channel(in[1])), rm = channel(in[3]);
  const Tensor sigma = sqrt(add(channel(in[4]), 1e-5));
  m[0] = reshape(add(div(mul(gamma, add(abs(x3), abs(rm))), sigma), abs(channel(in[2]))), x.shape());
  if (!w.defined()) return m;
  const Tensor aw = abs(reshape(w, {n, c, l}));
  m[1] = reshape(div(mul(aw, gamma), sigma), x.shape());
  m[2] = channel_sum(div(mul(aw, abs(sub(x3, rm))), sigma));
  m[3] = channel_sum(aw);
  return m;
}

// Max pooling routes each w to its window's maximum; overlapping windows sum several w into one
// input. The magnitudes: the gradient of the same windows (the signed input picks them) from |w|.
std::vector<Tensor> pool_magnitudes(const OpFn& fn, const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
  if (!w.defined()) return m;
  const Tensor x = in[0].clone().requires_grad_(true);
  fn({x}).backward(abs(w));
  m[1] = abs(x.grad());
  return m;
}

}  // namespace

std::vector<OpCase> cnn_cases() {
  std::vector<OpCase> cases;
  // Conv sums are long and in another order than fp64 on every backend (im2col's GEMM, the
  // direct tiles, Winograd, cuDNN's choice); f16 outputs round after fp32 accumulation.
  for (const ConvShape& c : kConvs) {
    const std::string name = "conv2d x " + c.x.str() + " w " + c.w.str() + geometry(c.stride, c.padding);
    cases.push_back(conv_case(name, {In(c.x), In(c.w), In({c.w.sizes()[0]})}, c, true));
  }
  // 64 channels x 3x3 taps x 64x64 pixels is 9.4 MB of f32 columns per image: 8 images exceed
  // the custom CUDA provider's 64 MiB column budget, so it runs two chunks and accumulates the
  // weight gradient across them (each entry sums 8 x 64 x 64 = 32768 products).
  const ConvShape chunked{{8, 64, 64, 64}, {16, 64, 3, 3}, 1, 1, 1};
  cases.push_back(conv_case("conv2d over more images than one column chunk x [8, 64, 64, 64] w [16, 64, 3, 3]",
                            {In(chunked.x), In(chunked.w), In({16})}, chunked, true)
                      .only({DType::f32}));
  const ConvShape rows{{2, 2, 6, 6}, {3, 2, 3, 3}, 1, 1, 1};
  cases.push_back(conv_case("conv2d without bias of rows 1.. of [3, 2, 6, 6]", {RowsOf(rows.x), In(rows.w)}, rows, false));

  for (const PoolShape& p : kPools) {
    const std::string g = " " + p.x.str() + " kernel " + [&] {
      std::ostringstream s;
      s << p.kernel;
      return s.str();
    }() + geometry(p.stride, p.padding);
    const int64_t window = p.kernel.h * p.kernel.w;
    const OpFn max_pool = [p](const Inputs& in) { return max_pool2d(in[0], p.kernel, p.stride, p.padding); };
    const MagnitudeFn routed = [max_pool](const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
      return pool_magnitudes(max_pool, in, w, std::move(m));
    };
    cases.push_back(OpCase("cnn", "max_pool2d" + g, {In(p.x)}, max_pool).sums(window).magnitudes(routed));
    // An average sums its window; an input's gradient sums the windows that hold it.
    cases.push_back(OpCase("cnn", "avg_pool2d" + g, {In(p.x)},
                           [p](const Inputs& in) { return avg_pool2d(in[0], p.kernel, p.stride, p.padding); })
                        .sums(window)
                        .abs_magnitude());
    // Whole numbers in [0, 200) repeat inside windows: the first maximum must take the gradient.
    cases.push_back(OpCase("cnn", "max_pool2d with ties" + g, {In(p.x, Values::integers)},
                           [p](const Inputs& in) { return max_pool2d(mul(in[0], 0.05), p.kernel, p.stride, p.padding); })
                        .sums(window)
                        .magnitudes([p](const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
                          const OpFn scaled = [p](const Inputs& x) {
                            return max_pool2d(mul(x[0], 0.05), p.kernel, p.stride, p.padding);
                          };
                          return pool_magnitudes(scaled, in, w, std::move(m));
                        })
                        .no_gradcheck());
  }
  // ceil_mode (max and average) and count_include_pad=false: windows that hang past the input (and
  // its padding), the last one kept only when it starts inside the input or its left padding
  // ([1, 1, 5, 5] kernel 2 stride 2 padding 1: 3 outputs, not ceil's 4), and average divisors
  // that count only the input's elements.
  const std::vector<PoolShape> ceil_pools = {
      {{2, 3, 7, 7}, 2, 2, 0}, {{1, 2, 6, 5}, 3, 2, 1}, {{1, 1, 5, 5}, 2, 2, 1}, {{2, 2, 5, 8}, {3, 2}, {2, 3}, {1, 0}},
  };
  for (const PoolShape& p : ceil_pools) {
    std::ostringstream g;
    g << " " << p.x << " kernel " << p.kernel << geometry(p.stride, p.padding);
    const int64_t window = p.kernel.h * p.kernel.w;
    const OpFn max_pool = [p](const Inputs& in) { return max_pool2d(in[0], p.kernel, p.stride, p.padding, 1, true); };
    cases.push_back(OpCase("cnn", "max_pool2d ceil_mode" + g.str(), {In(p.x)}, max_pool)
                        .sums(window)
                        .magnitudes([max_pool](const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
                          return pool_magnitudes(max_pool, in, w, std::move(m));
                        }));
    for (bool ceil : {false, true}) {
      for (bool include_pad : {false, true}) {
        if (!ceil && include_pad) continue;  // the loop above has it
        cases.push_back(OpCase("cnn",
                               std::string("avg_pool2d") + (ceil ? " ceil_mode" : "") +
                                   (include_pad ? "" : " count_include_pad=false") + g.str(),
                               {In(p.x)},
                               [p, ceil, include_pad](const Inputs& in) {
                                 return avg_pool2d(in[0], p.kernel, p.stride, p.padding, ceil, include_pad);
                               })
                            .sums(window)
                            .abs_magnitude());
      }
    }
  }
  // NaN wins a window (the first NaN takes the gradient), as in PyTorch: log of negatives.
  cases.push_back(OpCase("cnn", "max_pool2d of NaNs [2, 2, 6, 6]", {In({2, 2, 6, 6})},
                         [](const Inputs& in) { return max_pool2d(log(in[0]), 2); })
                      .no_gradcheck());
  cases.push_back(OpCase("cnn", "global_avg_pool2d [3, 4, 5, 6]", {In({3, 4, 5, 6})},
                         [](const Inputs& in) { return global_avg_pool2d(in[0]); })
                      .sums(30)
                      .abs_magnitude());

  // Batch norm: training (batch statistics), eval (running ones), and the running statistics
  // themselves, which are updated in place in double whatever their dtype.
  for (const Shape& shape : {Shape{4, 3, 5, 7}, Shape{5, 6}, Shape{2, 2, 1, 1}, Shape{64, 16, 9, 9}}) {
    const int64_t c = shape.sizes()[1];
    const int64_t count = shape.numel() / c;  // values per channel
    cases.push_back(OpCase("cnn", "batch_norm training " + shape.str(), {In(shape), In({c}), In({c})},
                           [c](const Inputs& in) {
                             const TensorOptions o = TensorOptions(in[0].dtype()).device(in[0].device());
                             return batch_norm(in[0], in[1], in[2], zeros({c}, o), ones({c}, o), true);
                           })
                        .sums(count)
                        .magnitudes(batch_norm_magnitudes));
    cases.push_back(OpCase("cnn", "batch_norm eval " + shape.str(),
                           {In(shape), In({c}), In({c}), Constant({c}), Constant({c}, Values::positive)},
                           [](const Inputs& in) { return batch_norm(in[0], in[1], in[2], in[3], in[4], false); })
                        .sums(count)
                        .magnitudes(batch_norm_eval_magnitudes));
    // The running statistics are momentum-weighted means of the batch's: sums of `count` terms.
    for (int which : {0, 1}) {
      cases.push_back(OpCase("cnn", std::string(which == 0 ? "running_mean" : "running_var") + " after batch_norm " +
                                        shape.str(),
                             {In(shape)},
                             [c, which](const Inputs& in) {
                               const TensorOptions o = TensorOptions(in[0].dtype()).device(in[0].device());
                               const Tensor rm = zeros({c}, o), rv = ones({c}, o);
                               batch_norm(in[0].detach(), Tensor(), Tensor(), rm, rv, true, 0.3);
                               return which == 0 ? rm : rv;
                             })
                          .sums(count)
                          .no_backward());
    }
  }
  // batch_norm_relu: the ReLU only zeroes values and their gradients, so batch norm's magnitudes
  // still bound it; batch_norm_add_relu adds the residual's |r| to y's, and the residual's
  // gradient is the masked output gradient, at most |w|.
  for (const Shape& shape : {Shape{4, 3, 5, 7}, Shape{5, 6}}) {
    const int64_t c = shape.sizes()[1];
    const int64_t count = shape.numel() / c;
    cases.push_back(OpCase("cnn", "batch_norm_relu training " + shape.str(), {In(shape), In({c}), In({c})},
                           [c](const Inputs& in) {
                             const TensorOptions o = TensorOptions(in[0].dtype()).device(in[0].device());
                             return batch_norm_relu(in[0], in[1], in[2], zeros({c}, o), ones({c}, o), true);
                           })
                        .sums(count)
                        .magnitudes(batch_norm_magnitudes));
    cases.push_back(OpCase("cnn", "batch_norm_relu eval " + shape.str(),
                           {In(shape), In({c}), In({c}), Constant({c}), Constant({c}, Values::positive)},
                           [](const Inputs& in) { return batch_norm_relu(in[0], in[1], in[2], in[3], in[4], false); })
                        .sums(count)
                        .magnitudes(batch_norm_eval_magnitudes));
    cases.push_back(OpCase("cnn", "batch_norm_add_relu training " + shape.str(),
                           {In(shape), In(shape), In({c}), In({c})},
                           [c](const Inputs& in) {
                             const TensorOptions o = TensorOptions(in[0].dtype()).device(in[0].device());
                             return batch_norm_add_relu(in[0], in[1], in[2], in[3], zeros({c}, o), ones({c}, o), true);
                           })
                        .sums(count)
                        .magnitudes([](const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
                          std::vector<Tensor> bn = batch_norm_magnitudes({in[0], in[2], in[3]}, w, {m[0], m[1], m[3], m[4]});
                          m[0] = add(bn[0], abs(in[1]));
                          if (!w.defined()) return m;
                          m[1] = bn[1];
                          m[2] = abs(w);
                          m[3] = bn[2];
                          m[4] = bn[3];
                          return m;
                        }));
  }
  cases.push_back(OpCase("cnn", "batch_norm training without affine, rows 1.. of [5, 3, 4, 4]", {RowsOf({4, 3, 4, 4})},
                         [](const Inputs& in) {
                           return batch_norm(in[0], Tensor(), Tensor(), Tensor(), Tensor(), true);
                         })
                      .sums(64)
                      .magnitudes(batch_norm_magnitudes));

  // Dropout draws its mask from Philox at the generator's state: the same on every device.
  for (const Shape& shape : {Shape{0}, Shape{1}, Shape{8, 16}, Shape{1000003}}) {
    for (double p : {0.0, 0.3, 1.0}) {
      cases.push_back(OpCase("cnn", "dropout p=" + std::to_string(p).substr(0, 3) + " " + shape.str(), {In(shape)},
                             [p](const Inputs& in) {
                               manual_seed(77);
                               return dropout(in[0], p, true);
                             }));
    }
  }
  // Feature dropout (Dropout2d): one draw per channel plane, the same on every device.
  for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{3, 4, 6}, Shape{4, 64, 33, 33}, Shape{0, 3, 2, 2}}) {
    for (double p : {0.3, 1.0}) {
      cases.push_back(OpCase("cnn", "dropout2d p=" + std::to_string(p).substr(0, 3) + " " + shape.str(), {In(shape)},
                             [p](const Inputs& in) {
                               manual_seed(79);
                               return dropout2d(in[0], p, true);
                             }));
    }
  }
  cases.push_back(OpCase("cnn", "feature_dropout p=0.5 [3, 7]", {In({3, 7})}, [](const Inputs& in) {
    manual_seed(80);
    return feature_dropout(in[0], 0.5, true);
  }));
  // A dropped inf or NaN gives NaN (x * 0), as in PyTorch: x / 0 is +-inf.
  cases.push_back(OpCase("cnn", "dropout of infinities [64]", {In({64})},
                         [](const Inputs& in) {
                           manual_seed(78);
                           return dropout(div(in[0], sub(in[0], in[0])), 0.5, true);
                         })
                      .no_backward());
  return cases;
}

}  // namespace ember::test
