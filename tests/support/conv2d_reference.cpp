#include "tests/support/conv2d_reference.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "autograd/ops.h"
#include "kernels/conv_geometry.h"
#include "kernels/cpu/conv2d_winograd.h"
#include "kernels/factories.h"
#include "tests/support/error_bound.h"
#include "tests/support/winograd_magnitude.h"

namespace ember::test {
namespace {

// Calls tap(n, o, c, kh, kw, oh, ow, ih, iw) for every product of the direct convolution, so the
// forward and backward references share the loops.
template <class Tap>
void for_each_tap(const ConvCase& k, const Shape& out, const Tap& tap) {
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.oc; ++o)
      for (int64_t oh = 0; oh < out[2]; ++oh)
        for (int64_t ow = 0; ow < out[3]; ++ow)
          for (int64_t c = 0; c < k.c; ++c)
            for (int64_t kh = 0; kh < k.kh; ++kh)
              for (int64_t kw = 0; kw < k.kw; ++kw) {
                const int64_t ih = oh * k.stride.h - k.padding.h + kh * k.dilation.h;
                const int64_t iw = ow * k.stride.w - k.padding.w + kw * k.dilation.w;
                if (ih >= 0 && ih < k.h && iw >= 0 && iw < k.w) tap(n, o, c, kh, kw, oh, ow, ih, iw);
              }
}

int64_t at4(const Shape& s, int64_t a, int64_t b, int64_t c, int64_t d) { return ((a * s[1] + b) * s[2] + c) * s[3] + d; }

// |t| in fp64 (undefined stays undefined).
Tensor abs64(const Tensor& t) { return t.defined() ? abs(t.to(kFloat64)) : Tensor(); }

}  // namespace

Shape conv_out_shape(const ConvCase& k) {
  return Shape{k.n, k.oc, kernels::conv_out_size(k.h, k.kh, k.stride.h, k.padding.h, k.dilation.h),
               kernels::conv_out_size(k.w, k.kw, k.stride.w, k.padding.w, k.dilation.w)};
}

Tensor reference_conv(const ConvCase& k, const Tensor& x, const Tensor& w, const Tensor& b) {
  const Shape out = conv_out_shape(k);
  const std::vector<double> xs = x.to_vector<double>(), ws = w.to_vector<double>();
  std::vector<double> y(static_cast<size_t>(out.numel()), 0.0);
  if (b.defined()) {
    const std::vector<double> bs = b.to_vector<double>();
    for (int64_t i = 0; i < out.numel(); ++i) y[static_cast<size_t>(i)] = bs[static_cast<size_t>((i / (out[2] * out[3])) % k.oc)];
  }
  for_each_tap(k, out, [&](int64_t n, int64_t o, int64_t c, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t ih,
                           int64_t iw) {
    y[static_cast<size_t>(at4(out, n, o, oh, ow))] +=
        xs[static_cast<size_t>(at4(x.shape(), n, c, ih, iw))] * ws[static_cast<size_t>(at4(w.shape(), o, c, kh, kw))];
  });
  return from_vector<double>(y, out);
}

ConvInputs make_inputs(const ConvCase& k, DType dtype) {
  return {randn({k.n, k.c, k.h, k.w}, dtype), randn({k.oc, k.c, k.kh, k.kw}, dtype), randn({k.oc}, dtype)};
}

std::string describe(const ConvCase& k) {
  std::ostringstream os;
  os << "conv2d x[" << k.n << "," << k.c << "," << k.h << "," << k.w << "] w[" << k.oc << "," << k.c << "," << k.kh
     << "," << k.kw << "] stride " << k.stride << " padding " << k.padding << " dilation " << k.dilation;
  return os.str();
}

namespace {

kernels::Conv2dGeometry geometry_of(const ConvCase& k) {
  const kernels::Conv2dArgs args{k.stride, k.padding, k.dilation};
  return kernels::conv2d_geometry(Shape{k.n, k.c, k.h, k.w}, Shape{k.oc, k.c, k.kh, k.kw}, args, "test");
}

}  // namespace

bool runs_winograd(const ConvCase& k, kernels::CpuConvAlgorithm algorithm) {
  switch (algorithm) {
    case kernels::CpuConvAlgorithm::winograd:
    case kernels::CpuConvAlgorithm::winograd4: return kernels::cpu::winograd_applies(geometry_of(k));
    case kernels::CpuConvAlgorithm::automatic: return kernels::cpu::winograd_pays(geometry_of(k));
    default: return false;
  }
}

int64_t forward_tile(const ConvCase& k, kernels::CpuConvAlgorithm algorithm) {
  switch (algorithm) {
    case kernels::CpuConvAlgorithm::winograd4: return 4;
    case kernels::CpuConvAlgorithm::automatic: return kernels::cpu::winograd4_pays(geometry_of(k)) ? 4 : 2;
    default: return 2;
  }
}

int64_t weight_grad_tile(const ConvCase& k, kernels::CpuConvAlgorithm algorithm) {
  switch (algorithm) {
    case kernels::CpuConvAlgorithm::winograd4: return 4;
    case kernels::CpuConvAlgorithm::automatic: return kernels::cpu::winograd4_weight_grad_pays(geometry_of(k)) ? 4 : 2;
    default: return 2;
  }
}

ConvGrads reference_grads(const ConvCase& k, kernels::CpuConvAlgorithm algorithm, DType dtype, const Tensor& x,
                          const Tensor& w, const Tensor& dy) {
  const Shape out = dy.shape();
  const std::vector<double> xs = x.to_vector<double>(), ws = w.to_vector<double>(), gs = dy.to_vector<double>();
  ConvGrads r;
  r.dx.assign(xs.size(), 0.0);
  r.dw.assign(ws.size(), 0.0);
  r.db.assign(static_cast<size_t>(k.oc), 0.0);
  std::vector<double> mx(xs.size(), 0.0), mw(ws.size(), 0.0), mb(static_cast<size_t>(k.oc), 0.0);
  for_each_tap(k, out, [&](int64_t n, int64_t o, int64_t c, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t ih,
                           int64_t iw) {
    const double g = gs[static_cast<size_t>(at4(out, n, o, oh, ow))];
    const size_t xi = static_cast<size_t>(at4(x.shape(), n, c, ih, iw)), wi = static_cast<size_t>(at4(w.shape(), o, c, kh, kw));
    r.dx[xi] += g * ws[wi];
    r.dw[wi] += g * xs[xi];
    mx[xi] += std::fabs(g * ws[wi]);
    mw[wi] += std::fabs(g * xs[xi]);
  });
  for (int64_t i = 0; i < out.numel(); ++i) {
    const size_t o = static_cast<size_t>((i / (out[2] * out[3])) % k.oc);
    r.db[o] += gs[static_cast<size_t>(i)];
    mb[o] += std::fabs(gs[static_cast<size_t>(i)]);
  }
  int64_t dx_terms = k.oc * k.kh * k.kw, dw_terms = k.n * out[2] * out[3];
  if (runs_winograd(k, algorithm)) {
    const Tensor ax = abs64(x), aw = abs64(w), ady = abs64(dy);
    const int64_t tile = weight_grad_tile(k, algorithm);
    mw = test::elementwise_max(from_vector<double>(mw, w.shape()), test::winograd_weight_grad_magnitude(ax, ady, k.padding, tile))
             .to_vector<double>();
    const int64_t tiles = k.n * ((out[2] + tile - 1) / tile) * ((out[3] + tile - 1) / tile);
    dw_terms = std::max(dw_terms, test::winograd_weight_grad_terms(tiles, tile));
    if (k.padding == Size2(1)) {
      mx = test::elementwise_max(from_vector<double>(mx, x.shape()),
                                 test::winograd_input_grad_magnitude(ady, aw, forward_tile(k, algorithm)))
               .to_vector<double>();
      dx_terms = std::max(dx_terms, test::winograd_forward_terms(k.oc, forward_tile(k, algorithm)));
    }
  }
  r.dx_bound = test::sum_error_bound(dx_terms, dtype, mx);
  r.dw_bound = test::sum_error_bound(dw_terms, dtype, mw);
  r.db_bound = test::sum_error_bound(k.n * out[2] * out[3], dtype, mb);
  return r;
}

Tensor forward_bound(const ConvCase& k, kernels::CpuConvAlgorithm algorithm, DType dtype, const ConvInputs& in,
                     bool bias) {
  const Tensor b = bias ? abs64(in.b) : Tensor();
  Tensor magnitude = reference_conv(k, abs64(in.x), abs64(in.w), b);
  int64_t terms = k.c * k.kh * k.kw + 1;
  if (runs_winograd(k, algorithm)) {
    const int64_t tile = forward_tile(k, algorithm);
    magnitude = test::elementwise_max(magnitude, test::winograd_forward_magnitude(abs64(in.x), abs64(in.w), b, k.padding, tile));
    terms = std::max(terms, test::winograd_forward_terms(k.c, tile));
  }
  return test::sum_error_bound(terms, dtype, magnitude);
}

}  // namespace ember::test
