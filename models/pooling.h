#pragma once
// Pooling layers over NCHW inputs (no parameters):
//
//   net->push_back(std::make_shared<ember::nn::MaxPool2d>(2));          // 2x2 windows, stride 2
//   net->push_back(std::make_shared<ember::nn::AvgPool2d>(3, 1, 1));    // 3x3 windows, stride 1, padding 1
//   net->push_back(std::make_shared<ember::nn::AdaptiveAvgPool2d>(1));  // [N, C, H, W] -> [N, C, 1, 1]
//   auto pool = std::make_shared<ember::nn::AvgPool2d>(
//       ember::nn::AvgPool2dOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
//
// The stride defaults to the kernel size; padding is at most half the kernel. ceil_mode rounds
// the output size up (PyTorch's rule, autograd/ops.h). AvgPool2d counts the padding in the
// divisor unless count_include_pad(false) (PyTorch's default is true).
#include "kernels/conv_geometry.h"
#include "models/module.h"

namespace ember::nn {

// libtorch's MaxPool2dOptions and AvgPool2dOptions, chainable; count_include_pad is AvgPool2d's.
struct Pool2dOptions {
  Pool2dOptions(Size2 kernel_size) : kernel_(kernel_size), stride_(kernel_size) {}  // NOLINT: implicit, as libtorch's
  Pool2dOptions& stride(Size2 s) { stride_ = s; return *this; }
  Pool2dOptions& padding(Size2 p) { padding_ = p; return *this; }
  Pool2dOptions& ceil_mode(bool on) { ceil_mode_ = on; return *this; }
  Pool2dOptions& count_include_pad(bool on) { count_include_pad_ = on; return *this; }
  Size2 kernel_;
  Size2 stride_;
  Size2 padding_{0};
  bool ceil_mode_ = false;
  bool count_include_pad_ = true;
};
using MaxPool2dOptions = Pool2dOptions;
using AvgPool2dOptions = Pool2dOptions;

// What MaxPool2d and AvgPool2d share: the options, the three ways to give them, and how they print.
class Pool2d : public Module {
 public:
  explicit Pool2d(const Pool2dOptions& options) : options_(options) {}
  explicit Pool2d(Size2 kernel_size) : Pool2d(Pool2dOptions(kernel_size)) {}
  Pool2d(Size2 kernel_size, Size2 stride, Size2 padding = 0)
      : Pool2d(Pool2dOptions(kernel_size).stride(stride).padding(padding)) {}
  const Pool2dOptions& options() const { return options_; }

 protected:
  std::string extra_str() const override;

 private:
  Pool2dOptions options_;
};

class MaxPool2d : public Pool2d {
 public:
  using Pool2d::Pool2d;
  const char* name() const override { return "MaxPool2d"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
};

class AvgPool2d : public Pool2d {
 public:
  using Pool2d::Pool2d;
  const char* name() const override { return "AvgPool2d"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
};

// Average pooling to a fixed output size; only 1x1 (global average pooling) is supported.
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Size2 output_size);
  const char* name() const override { return "AdaptiveAvgPool2d"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
  std::string extra_str() const override { return "output=(1, 1)"; }
};

}  // namespace ember::nn
