// Placeholder: replaced by kernels/cpu/reduce.cpp and kernels/cpu/softmax.cpp.
#include "core/error.h"
#include "kernels/ops.h"

namespace ember::kernels::cpu {
Tensor reduce_all(ReduceOp, const Tensor&) { EMBER_THROW("reduce_all: not implemented on cpu"); }
Tensor reduce_dim(ReduceOp, const Tensor&, int64_t, bool) { EMBER_THROW("reduce_dim: not implemented on cpu"); }
Tensor argmax_all(const Tensor&) { EMBER_THROW("argmax: not implemented on cpu"); }
Tensor argmax_dim(const Tensor&, int64_t, bool) { EMBER_THROW("argmax: not implemented on cpu"); }
Tensor scatter_dim(const Tensor&, const Tensor&, const Shape&, int64_t) { EMBER_THROW("scatter_dim: not implemented"); }
Tensor softmax(const Tensor&, int64_t) { EMBER_THROW("softmax: not implemented"); }
Tensor log_softmax(const Tensor&, int64_t) { EMBER_THROW("log_softmax: not implemented"); }
Tensor softmax_backward(const Tensor&, const Tensor&, int64_t) { EMBER_THROW("softmax_backward: not implemented"); }
Tensor log_softmax_backward(const Tensor&, const Tensor&, int64_t) { EMBER_THROW("not implemented"); }
Tensor cross_entropy(const Tensor&, const Tensor&, Tensor*) { EMBER_THROW("cross_entropy: not implemented"); }
Tensor cross_entropy_backward(const Tensor&, const Tensor&, const Tensor&) { EMBER_THROW("not implemented"); }
}  // namespace ember::kernels::cpu
