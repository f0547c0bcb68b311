// Placeholder: replaced by kernels/cpu/matmul.cpp and kernels/cpu/transpose.cpp.
#include "core/error.h"
#include "kernels/ops.h"

namespace ember::kernels::cpu {
Tensor matmul(const Tensor&, const Tensor&, bool, bool) { EMBER_THROW("matmul: not implemented on cpu"); }
Tensor transpose(const Tensor&, int64_t, int64_t) { EMBER_THROW("transpose: not implemented on cpu"); }
}  // namespace ember::kernels::cpu
