// The comparisons of core/compare_ops.def (eq, ne, lt, le, gt, ge) as free functions. Their u8
// results have no gradient, so nothing is recorded: the same op with grad mode on or off.
//
//   int64_t correct = ember::eq(output.argmax(1), labels).sum().item<int64_t>();
#include "autograd/ops.h"
#include "kernels/ops.h"

namespace ember {

#define EMBER_COMPARE_OP(name, forward)                                                                         \
  Tensor name(const Tensor& a, const Tensor& b) { return kernels::compare(kernels::CompareOp::name, a, b); } \
  Tensor name(const Tensor& a, double s) { return kernels::compare_scalar(kernels::CompareOp::name, a, s); }
#include "core/compare_ops.def"
#undef EMBER_COMPARE_OP

}  // namespace ember
