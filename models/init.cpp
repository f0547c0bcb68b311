#include "models/init.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "kernels/factories.h"
#include "memory/scopes.h"

namespace ember::nn::init {

namespace {

// Replaces t's values by a draw of the same shape, dtype and device (a short-lived temporary).
template <class Draw>
Tensor overwrite(Tensor& t, Draw draw) {
  NoGradGuard no_grad;
  CategoryScope scope(MemoryCategory::temporary);
  t.copy_(draw(TensorOptions(t.dtype()).device(t.device())));
  return t;
}

void check_floating(const Tensor& t, const char* op) {
  EMBER_CHECK(t.defined(), "nn::init::" << op << ": the tensor is undefined");
  EMBER_CHECK(is_floating(t.dtype()), "nn::init::" << op << ": expected a floating tensor, got " << dtype_name(t.dtype()));
}

Tensor fill(Tensor& t, double value, const char* op) {
  check_floating(t, op);
  NoGradGuard no_grad;
  t.fill_(value);
  return t;
}

double kaiming_std(const Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  const int64_t fan = mode == FanMode::fan_in ? fan_in : fan_out;
  EMBER_CHECK(fan > 0, "nn::init::kaiming: the fan of a tensor " << t.shape() << " is zero");
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}

double xavier_std(const Tensor& t, double gain) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  EMBER_CHECK(fan_in + fan_out > 0, "nn::init::xavier: the fans of a tensor " << t.shape() << " are zero");
  return gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
}

}  // namespace

double calculate_gain(Nonlinearity nonlinearity, double param) {
  switch (nonlinearity) {
    case Nonlinearity::linear:
    case Nonlinearity::conv:
    case Nonlinearity::sigmoid: return 1.0;
    case Nonlinearity::tanh: return 5.0 / 3.0;
    case Nonlinearity::relu: return std::sqrt(2.0);
    case Nonlinearity::leaky_relu: return std::sqrt(2.0 / (1.0 + param * param));
  }
  return 1.0;
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  EMBER_CHECK(tensor.defined() && tensor.dim() >= 2,
              "nn::init: fan in and fan out need a tensor with at least 2 dims, got "
                  << (tensor.defined() ? tensor.shape().str() : std::string("an undefined tensor")));
  int64_t receptive_field = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

Tensor uniform_(Tensor tensor, double low, double high) {
  check_floating(tensor, "uniform_");
  return overwrite(tensor, [&](TensorOptions o) { return rand(tensor.shape(), o, low, high); });
}

Tensor normal_(Tensor tensor, double mean, double std) {
  check_floating(tensor, "normal_");
  return overwrite(tensor, [&](TensorOptions o) { return randn(tensor.shape(), o, mean, std); });
}

Tensor constant_(Tensor tensor, double value) { return fill(tensor, value, "constant_"); }
Tensor zeros_(Tensor tensor) { return fill(tensor, 0.0, "zeros_"); }
Tensor ones_(Tensor tensor) { return fill(tensor, 1.0, "ones_"); }

Tensor kaiming_uniform_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  check_floating(tensor, "kaiming_uniform_");
  const double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity);
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  check_floating(tensor, "kaiming_normal_");
  return normal_(tensor, 0.0, kaiming_std(tensor, a, mode, nonlinearity));
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  check_floating(tensor, "xavier_uniform_");
  const double bound = std::sqrt(3.0) * xavier_std(tensor, gain);
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  check_floating(tensor, "xavier_normal_");
  return normal_(tensor, 0.0, xavier_std(tensor, gain));
}

}  // namespace ember::nn::init
