#pragma once
// nn::Conv2d: 2-D convolution over NCHW inputs, PyTorch's layout and default init.
//
//   auto conv = std::make_shared<ember::nn::Conv2d>(ember::nn::Conv2dOptions(1, 32, 3).padding(1));
//   ember::Tensor y = conv->forward(x);   // x [N, 1, 28, 28] -> y [N, 32, 28, 28]
//
// Init (PyTorch's kaiming_uniform_ with a = sqrt(5)): weight and bias are both
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in * KH * KW, drawn from the
// global generator (ember::manual_seed). groups = 1.
#include <cstdint>

#include "kernels/conv_geometry.h"
#include "models/module.h"

namespace ember::nn {

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : in_(in_channels), out_(out_channels), kernel_(kernel_size) {}
  Conv2dOptions& stride(Size2 s) { stride_ = s; return *this; }
  Conv2dOptions& padding(Size2 p) { padding_ = p; return *this; }
  Conv2dOptions& dilation(Size2 d) { dilation_ = d; return *this; }
  Conv2dOptions& bias(bool on) { bias_ = on; return *this; }
  int64_t in_;
  int64_t out_;
  Size2 kernel_;
  Size2 stride_{1};
  Size2 padding_{0};
  Size2 dilation_{1};
  bool bias_ = true;
};

class Conv2d : public Module {
 public:
  explicit Conv2d(const Conv2dOptions& options);
  Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : Conv2d(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  const char* name() const override { return "Conv2d"; }

  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // undefined without bias
  const Conv2dOptions& options() const { return options_; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
  std::string extra_str() const override;

 private:
  Conv2dOptions options_;
  Tensor weight_;  // [out, in, KH, KW]
  Tensor bias_;    // [out]
};

}  // namespace ember::nn
