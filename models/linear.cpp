#include "models/linear.h"

#include <cmath>
#include <sstream>

#include "autograd/ops.h"
#include "kernels/factories.h"
#include "memory/scopes.h"

namespace ember::nn {

Linear::Linear(const LinearOptions& options) : options_(options) {
  EMBER_CHECK(options.in_ > 0 && options.out_ > 0,
              "Linear: sizes must be positive, got in=" << options.in_ << ", out=" << options.out_);
  CategoryScope scope(MemoryCategory::parameter);
  // kaiming_uniform_(a = sqrt(5)) gives bound = sqrt(6 / ((1 + 5) * in)) = 1 / sqrt(in); the bias uses the same.
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.in_));
  weight_ = register_parameter("weight", rand({options.out_, options.in_}, {}, -bound, bound));
  if (options.bias_) bias_ = register_parameter("bias", rand({options.out_}, {}, -bound, bound));
}

Tensor Linear::forward_impl(const Tensor& x) { return linear(x, weight_, bias_); }

std::string Linear::extra_str() const {
  std::ostringstream os;
  os << "in=" << options_.in_ << ", out=" << options_.out_;
  if (!options_.bias_) os << ", bias=false";
  return os.str();
}

}  // namespace ember::nn
