#pragma once
// nn::init: in-place initialisers with libtorch's formulas, drawn from the global generator
// (ember::manual_seed makes them repeatable, on the CPU and on CUDA alike). Each runs under
// NoGradGuard, so it works on parameters, and returns its tensor.
//
//   net->apply([](nn::Module& m) {
//     if (auto* fc = dynamic_cast<nn::Linear*>(&m)) {
//       nn::init::kaiming_normal_(fc->weight(), 0.0, nn::init::FanMode::fan_out, nn::init::Nonlinearity::relu);
//       nn::init::zeros_(fc->bias());
//     }
//   });
//
// fan_in = size(1) * receptive field, fan_out = size(0) * receptive field, where the receptive
// field is the product of the dims after the first two (a conv's KH * KW); both need >= 2 dims.
#include <cstdint>
#include <utility>

#include "core/tensor.h"

namespace ember::nn::init {

enum class FanMode { fan_in, fan_out };
enum class Nonlinearity { linear, conv, sigmoid, tanh, relu, leaky_relu };

// The recommended gain: 1 (linear, conv, sigmoid), 5/3 (tanh), sqrt(2) (relu),
// sqrt(2 / (1 + a^2)) (leaky_relu with negative slope a).
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);
// {fan_in, fan_out} of a weight [out, in, ...].
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor uniform_(Tensor tensor, double low = 0.0, double high = 1.0);
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0);
Tensor constant_(Tensor tensor, double value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
// std = gain / sqrt(fan); uniform on [-sqrt(3) std, sqrt(3) std], or normal(0, std).
// gain = calculate_gain(nonlinearity, a).
Tensor kaiming_uniform_(Tensor tensor, double a = 0.0, FanMode mode = FanMode::fan_in,
                        Nonlinearity nonlinearity = Nonlinearity::leaky_relu);
Tensor kaiming_normal_(Tensor tensor, double a = 0.0, FanMode mode = FanMode::fan_in,
                       Nonlinearity nonlinearity = Nonlinearity::leaky_relu);
// std = gain * sqrt(2 / (fan_in + fan_out)); uniform on [-sqrt(3) std, sqrt(3) std], or normal(0, std).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);

}  // namespace ember::nn::init
