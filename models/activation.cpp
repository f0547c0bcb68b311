#include "models/activation.h"

#include "autograd/ops.h"

namespace ember::nn {

Tensor ReLU::forward_impl(const Tensor& x) { return relu(x); }
Tensor Sigmoid::forward_impl(const Tensor& x) { return sigmoid(x); }
Tensor Tanh::forward_impl(const Tensor& x) { return tanh(x); }
Tensor GELU::forward_impl(const Tensor& x) { return gelu(x); }
Tensor SiLU::forward_impl(const Tensor& x) { return silu(x); }

}  // namespace ember::nn
