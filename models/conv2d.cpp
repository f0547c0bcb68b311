#include "models/conv2d.h"

#include <cmath>
#include <sstream>

#include "autograd/ops.h"
#include "kernels/factories.h"
#include "memory/scopes.h"

namespace ember::nn {

Conv2d::Conv2d(const Conv2dOptions& options) : options_(options) {
  const Size2 k = options.kernel_;
  EMBER_CHECK(options.in_ > 0 && options.out_ > 0 && k.h > 0 && k.w > 0,
              "Conv2d: sizes must be positive, got in=" << options.in_ << ", out=" << options.out_ << ", kernel=" << k);
  CategoryScope scope(MemoryCategory::parameter);
  // kaiming_uniform_(a = sqrt(5)) gives bound = sqrt(6 / ((1 + 5) * fan_in)) = 1 / sqrt(fan_in); the bias uses the same.
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.in_ * k.h * k.w));
  weight_ = register_parameter("weight", rand({options.out_, options.in_, k.h, k.w}, {}, -bound, bound));
  if (options.bias_) bias_ = register_parameter("bias", rand({options.out_}, {}, -bound, bound));
}

Tensor Conv2d::forward_impl(const Tensor& x) {
  return conv2d(x, weight_, bias_, options_.stride_, options_.padding_, options_.dilation_);
}

std::string Conv2d::extra_str() const {
  std::ostringstream os;
  os << "in=" << options_.in_ << ", out=" << options_.out_ << ", kernel=" << options_.kernel_
     << ", stride=" << options_.stride_ << ", padding=" << options_.padding_;
  if (!(options_.dilation_ == Size2(1))) os << ", dilation=" << options_.dilation_;
  if (!options_.bias_) os << ", bias=false";
  return os.str();
}

}  // namespace ember::nn
