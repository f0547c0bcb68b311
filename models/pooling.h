#pragma once
// Pooling layers over NCHW inputs (no parameters):
//
//   net->push_back(std::make_shared<ember::nn::MaxPool2d>(2));          // 2x2 windows, stride 2
//   net->push_back(std::make_shared<ember::nn::AvgPool2d>(3, 1, 1));    // 3x3 windows, stride 1, padding 1
//   net->push_back(std::make_shared<ember::nn::AdaptiveAvgPool2d>(1));  // [N, C, H, W] -> [N, C, 1, 1]
//
// The stride defaults to the kernel size; padding is at most half the kernel.
// AvgPool2d counts the padding in the divisor (PyTorch's count_include_pad=true).
#include "kernels/conv_geometry.h"
#include "models/module.h"

namespace ember::nn {

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Size2 kernel_size) : MaxPool2d(kernel_size, kernel_size) {}
  MaxPool2d(Size2 kernel_size, Size2 stride, Size2 padding = 0);
  const char* name() const override { return "MaxPool2d"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
  std::string extra_str() const override;

 private:
  Size2 kernel_, stride_, padding_;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Size2 kernel_size) : AvgPool2d(kernel_size, kernel_size) {}
  AvgPool2d(Size2 kernel_size, Size2 stride, Size2 padding = 0);
  const char* name() const override { return "AvgPool2d"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
  std::string extra_str() const override;

 private:
  Size2 kernel_, stride_, padding_;
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
