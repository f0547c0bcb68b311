#include "models/dropout.h"

#include <sstream>

#include "autograd/ops.h"

namespace ember::nn {

Dropout::Dropout(double p, const char* layer) : p_(p) {
  EMBER_CHECK(p >= 0.0 && p <= 1.0, layer << ": probability must be in [0, 1], got " << p);
}

Tensor Dropout::forward_impl(const Tensor& x) { return dropout(x, p_, is_training()); }

Tensor Dropout2d::forward_impl(const Tensor& x) { return dropout2d(x, p(), is_training()); }

std::string Dropout::extra_str() const {
  std::ostringstream os;
  os << "p=" << p_;
  return os.str();
}

}  // namespace ember::nn
