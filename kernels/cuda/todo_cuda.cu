// Placeholder: each function moves to its own kernels/cuda/<op>.cu.
#include "core/error.h"
#include "kernels/ops.h"

namespace ember::kernels::cuda {
#define EMBER_CUDA_TODO(name) EMBER_THROW(name ": not implemented on cuda yet")
Tensor unary(UnaryOp, const Tensor&, double) { EMBER_CUDA_TODO("unary"); }
Tensor unary_backward(UnaryOp, const Tensor&, const Tensor&, const Tensor&, double) { EMBER_CUDA_TODO("unary_backward"); }
Tensor binary(BinaryOp, const Tensor&, const Tensor&) { EMBER_CUDA_TODO("binary"); }
Tensor binary_scalar(BinaryOp, const Tensor&, double, bool) { EMBER_CUDA_TODO("binary_scalar"); }
Tensor sum_to(const Tensor&, const Shape&) { EMBER_CUDA_TODO("sum_to"); }
Tensor expand(const Tensor&, const Shape&) { EMBER_CUDA_TODO("expand"); }
Tensor cast(const Tensor&, DType) { EMBER_CUDA_TODO("cast"); }
void fill_(const Tensor&, double) { EMBER_CUDA_TODO("fill_"); }
void add_(const Tensor&, const Tensor&, double) { EMBER_CUDA_TODO("add_"); }
void mul_scalar_(const Tensor&, double) { EMBER_CUDA_TODO("mul_"); }
void copy_(const Tensor&, const Tensor&) { EMBER_CUDA_TODO("copy_"); }
void arange_(const Tensor&, double, double) { EMBER_CUDA_TODO("arange_"); }
void uniform_(const Tensor&, GeneratorState, double, double) { EMBER_CUDA_TODO("uniform_"); }
void normal_(const Tensor&, GeneratorState, double, double) { EMBER_CUDA_TODO("normal_"); }
Tensor reduce_all(ReduceOp, const Tensor&) { EMBER_CUDA_TODO("reduce_all"); }
Tensor reduce_dim(ReduceOp, const Tensor&, int64_t, bool) { EMBER_CUDA_TODO("reduce_dim"); }
Tensor argmax_all(const Tensor&) { EMBER_CUDA_TODO("argmax"); }
Tensor argmax_dim(const Tensor&, int64_t, bool) { EMBER_CUDA_TODO("argmax"); }
Tensor scatter_dim(const Tensor&, const Tensor&, const Shape&, int64_t) { EMBER_CUDA_TODO("scatter_dim"); }
Tensor matmul(const Tensor&, const Tensor&, bool, bool) { EMBER_CUDA_TODO("matmul"); }
Tensor transpose(const Tensor&, int64_t, int64_t) { EMBER_CUDA_TODO("transpose"); }
Tensor softmax(const Tensor&, int64_t) { EMBER_CUDA_TODO("softmax"); }
Tensor log_softmax(const Tensor&, int64_t) { EMBER_CUDA_TODO("log_softmax"); }
Tensor softmax_backward(const Tensor&, const Tensor&, int64_t) { EMBER_CUDA_TODO("softmax_backward"); }
Tensor log_softmax_backward(const Tensor&, const Tensor&, int64_t) { EMBER_CUDA_TODO("log_softmax_backward"); }
Tensor cross_entropy(const Tensor&, const Tensor&, Tensor*) { EMBER_CUDA_TODO("cross_entropy"); }
Tensor cross_entropy_backward(const Tensor&, const Tensor&, const Tensor&) { EMBER_CUDA_TODO("cross_entropy_backward"); }
void sgd_step_(const Tensor&, const Tensor&, const Tensor&, const SgdOptions&, bool) { EMBER_CUDA_TODO("sgd_step"); }
}  // namespace ember::kernels::cuda
