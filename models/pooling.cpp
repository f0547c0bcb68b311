#include "models/pooling.h"

#include <sstream>

#include "autograd/ops.h"

namespace ember::nn {

// count_include_pad is printed where it is not the default (it means nothing to MaxPool2d, whose is).
std::string Pool2d::extra_str() const {
  const Pool2dOptions& o = options_;
  std::ostringstream os;
  os << "kernel=" << o.kernel_ << ", stride=" << o.stride_ << ", padding=" << o.padding_;
  if (o.ceil_mode_) os << ", ceil_mode=true";
  if (!o.count_include_pad_) os << ", count_include_pad=false";
  return os.str();
}

Tensor MaxPool2d::forward_impl(const Tensor& x) {
  const Pool2dOptions& o = options();
  return max_pool2d(x, o.kernel_, o.stride_, o.padding_, 1, o.ceil_mode_);
}

Tensor AvgPool2d::forward_impl(const Tensor& x) {
  const Pool2dOptions& o = options();
  return avg_pool2d(x, o.kernel_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_);
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(Size2 output_size) {
  EMBER_CHECK(output_size == Size2(1),
              "AdaptiveAvgPool2d: only output size (1, 1) (global average pooling) is supported, got " << output_size);
}

Tensor AdaptiveAvgPool2d::forward_impl(const Tensor& x) { return global_avg_pool2d(x); }

}  // namespace ember::nn
