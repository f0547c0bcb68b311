#include "models/pooling.h"

#include <sstream>

#include "autograd/ops.h"

namespace ember::nn {

namespace {
std::string window_str(const Size2& kernel, const Size2& stride, const Size2& padding) {
  std::ostringstream os;
  os << "kernel=" << kernel << ", stride=" << stride << ", padding=" << padding;
  return os.str();
}
}  // namespace

MaxPool2d::MaxPool2d(Size2 kernel_size, Size2 stride, Size2 padding)
    : kernel_(kernel_size), stride_(stride), padding_(padding) {}

Tensor MaxPool2d::forward_impl(const Tensor& x) { return max_pool2d(x, kernel_, stride_, padding_); }

std::string MaxPool2d::extra_str() const { return window_str(kernel_, stride_, padding_); }

AvgPool2d::AvgPool2d(Size2 kernel_size, Size2 stride, Size2 padding)
    : kernel_(kernel_size), stride_(stride), padding_(padding) {}

Tensor AvgPool2d::forward_impl(const Tensor& x) { return avg_pool2d(x, kernel_, stride_, padding_); }

std::string AvgPool2d::extra_str() const { return window_str(kernel_, stride_, padding_); }

AdaptiveAvgPool2d::AdaptiveAvgPool2d(Size2 output_size) {
  EMBER_CHECK(output_size == Size2(1),
              "AdaptiveAvgPool2d: only output size (1, 1) (global average pooling) is supported, got " << output_size);
}

Tensor AdaptiveAvgPool2d::forward_impl(const Tensor& x) { return global_avg_pool2d(x); }

}  // namespace ember::nn
