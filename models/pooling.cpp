#include "models/pooling.h"

#include <sstream>

#include "autograd/ops.h"

namespace ember::nn {

namespace {
std::string window_str(const Pool2dOptions& o, bool average) {
  std::ostringstream os;
  os << "kernel=" << o.kernel_ << ", stride=" << o.stride_ << ", padding=" << o.padding_;
  if (o.ceil_mode_) os << ", ceil_mode=true";
  if (average && !o.count_include_pad_) os << ", count_include_pad=false";
  return os.str();
}
}  // namespace

MaxPool2d::MaxPool2d(const Pool2dOptions& options) : options_(options) {}

Tensor MaxPool2d::forward_impl(const Tensor& x) {
  const Pool2dOptions& o = options_;
  return max_pool2d(x, o.kernel_, o.stride_, o.padding_, 1, o.ceil_mode_);
}

std::string MaxPool2d::extra_str() const { return window_str(options_, false); }

AvgPool2d::AvgPool2d(const Pool2dOptions& options) : options_(options) {}

Tensor AvgPool2d::forward_impl(const Tensor& x) {
  const Pool2dOptions& o = options_;
  return avg_pool2d(x, o.kernel_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_);
}

std::string AvgPool2d::extra_str() const { return window_str(options_, true); }

AdaptiveAvgPool2d::AdaptiveAvgPool2d(Size2 output_size) {
  EMBER_CHECK(output_size == Size2(1),
              "AdaptiveAvgPool2d: only output size (1, 1) (global average pooling) is supported, got " << output_size);
}

Tensor AdaptiveAvgPool2d::forward_impl(const Tensor& x) { return global_avg_pool2d(x); }

}  // namespace ember::nn
