#pragma once
// The kernel layer's entry points: plain computations on tensors, no autograd.
// Each function checks its arguments once (shapes, dtypes, devices; errors name
// the op and the shapes) and then dispatches on the device to kernels/cpu/ or
// kernels/cuda/. An entry point that returns a tensor also allocates it (memory/empty.h)
// and hands it to the backend, which only writes it (kernels/backend_into.inc); the ops
// that make no tensor share their signature with the backend (kernels/backend_api.inc).
#include <cstdint>

#include "core/generator.h"
#include "core/tensor.h"
#include "kernels/block_copy.h"     // BlockCopy
#include "kernels/conv_geometry.h"  // Conv2dArgs, Pool2dArgs

namespace ember::kernels {

enum class UnaryOp : uint8_t {
#define EMBER_UNARY_OP(name, forward, derivative, saves) name,
#define EMBER_UNARY_OP_PUBLIC EMBER_UNARY_OP
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
};
enum class BinaryOp : uint8_t {
#define EMBER_BINARY_OP(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads) name,
#define EMBER_BINARY_OP_PUBLIC EMBER_BINARY_OP
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP_PUBLIC
#undef EMBER_BINARY_OP
};
enum class CompareOp : uint8_t {
#define EMBER_COMPARE_OP(name, forward) name,
#include "core/compare_ops.def"
#undef EMBER_COMPARE_OP
};
enum class ReduceOp : uint8_t { sum, mean, max };

const char* unary_op_name(UnaryOp op);
const char* binary_op_name(BinaryOp op);
const char* compare_op_name(CompareOp op);

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

// Adam (decoupled = false: L2 decay added to the gradient) or AdamW (decoupled = true:
// p *= 1 - lr * weight_decay before the moment update), PyTorch's formulas.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool decoupled = false;
};

// The loss of cross_entropy is fp32 (fp64 for f64 logits, so gradcheck can run in fp64):
// with fp16 logits the loss and its gradient seed stay in fp32, as mixed precision needs.
inline DType cross_entropy_loss_dtype(DType logits) { return logits == DType::f64 ? DType::f64 : DType::f32; }

// transpose's view of x: [outer, a, mid, b, inner], swapping the a and b dims (entry point
// computes it once; the backends only move bytes).
struct TransposeLayout {
  int64_t outer = 1, a = 1, mid = 1, b = 1, inner = 1;
};

// The first element of an index or label tensor that is outside its range (find_out_of_range):
// its flat position and value; position -1 when every element is in range.
struct OutOfRange {
  int64_t position = -1;
  int64_t value = 0;
  bool found() const { return position >= 0; }
};

// --- elementwise (kernels/{cpu,cuda}/elementwise); outputs are allocated by the entry point ---
// y = op(x); `scalar` is pow's exponent. Floating dtypes.
Tensor unary(UnaryOp op, const Tensor& x, double scalar);
// x = op(x) in place (autograd uses it on a temporary nobody else holds).
void unary_(UnaryOp op, const Tensor& x, double scalar);
// dx = dy * op'(x), given x, y = op(x) and dy.
Tensor unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, double scalar);
// a op b with NumPy broadcasting; a and b share dtype and device.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
// The gradient of a (wrt_b false) or of b, the table's grad_a / grad_b column, at dy's shape
// (the broadcast shape; autograd sums it back with sum_to). An operand the formula does not
// read may be a stand-in of dy's shape and dtype.
Tensor binary_backward(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& dy, bool wrt_b);
// a op s (or s op a when scalar_first).
Tensor binary_scalar(BinaryOp op, const Tensor& a, double s, bool scalar_first);
// Sums x over the dims that broadcasting expanded, giving `shape` (the reverse of expand).
Tensor sum_to(const Tensor& x, const Shape& shape);
// Materialises x broadcast to `shape`.
Tensor expand(const Tensor& x, const Shape& shape);
// Any dtype to any dtype (float -> int truncates toward zero).
Tensor cast(const Tensor& x, DType dtype);
// u8 (1 or 0) = a op b with NumPy broadcasting; a and b share dtype (any) and device.
Tensor compare(CompareOp op, const Tensor& a, const Tensor& b);
// u8 = a op s: a floating a against s rounded to a's dtype (PyTorch's rule for a Python
// number), an integer a against s in double (exact for |a| <= 2^53).
Tensor compare_scalar(CompareOp op, const Tensor& a, double s);


// --- reductions (kernels/{cpu,cuda}/reduce); accumulate in fp32 (fp64 for f64) ---
// Floating x keeps its dtype. The sum of an integer x (u8, i64: a count of comparisons) is i64,
// as in PyTorch, and exact; mean and max need a floating x.
inline DType reduce_dtype(DType x) { return is_floating(x) ? x : DType::i64; }
Tensor reduce_all(ReduceOp op, const Tensor& x);  // 0-d result
Tensor reduce_dim(ReduceOp op, const Tensor& x, int64_t dim, bool keepdim);
// i64 indices of the first maximum; over all elements (0-d) or along dim.
Tensor argmax_all(const Tensor& x);
Tensor argmax_dim(const Tensor& x, int64_t dim, bool keepdim);
// Zeros of `shape` with dy scattered to indices along dim (dy and indices have keepdim shape;
// every index is in [0, shape[dim]), which the entry point checks).
Tensor scatter_dim(const Tensor& dy, const Tensor& indices, const Shape& shape, int64_t dim);

// --- softmax family (kernels/{cpu,cuda}/softmax); numerically stable, along dim ---
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim);
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim);
// Mean cross entropy of logits [N, C] against i64 labels [N] (0 <= label < C; the entry points of
// the forward and the backward both check it).
// Returns the 0-d loss (dtype: cross_entropy_loss_dtype) and writes log_softmax(logits) to *log_probs.
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Tensor* log_probs);
// dlogits = (softmax - onehot(labels)) * dloss / N
Tensor cross_entropy_backward(const Tensor& log_probs, const Tensor& labels, const Tensor& dloss);
// [N, classes] of `dtype` on labels' device: 1 at (i, labels[i]), 0 elsewhere. Labels are i64 [N]
// in [0, classes); a label outside throws naming `op` (the loss that asked).
Tensor one_hot(const Tensor& labels, int64_t classes, DType dtype, const char* op = "one_hot");

// y = x with dims dim0 and dim1 swapped, materialised (any dtype).
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);

// --- slicing and joining (kernels/dispatch_slice.cpp), materialised by one copy kernel
// (kernels/block_copy.h), any dtype; autograd/ops.h's narrow, select, slice, permute, cat and
// stack take libtorch's arguments and call these ---
// The elements x[start], x[start + step], ... (`length` of them) along dim. dim is wrapped,
// start >= 0, step >= 1, and the last one is inside x (length 0 takes nothing).
struct SliceArgs {
  int64_t dim = 0, start = 0, length = 0, step = 1;
};
// y = those elements; x's shape with size `length` at dim.
Tensor slice(const Tensor& x, const SliceArgs& s);
// dx = zeros of x_shape with dy (the slice's shape) written to the slice's elements.
Tensor slice_backward(const Tensor& dy, const Shape& x_shape, const SliceArgs& s);
// y.size(d) = x.size(dims[d]); dims is a permutation of x's dims (already wrapped).
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
// Whether cat leaves t out, as libtorch does: a 1-D empty tensor [0] joins anything.
inline bool cat_skips(const Shape& t) { return t.dim() == 1 && t[0] == 0; }
// xs joined along dim (wrapped against the first tensor cat does not skip, as libtorch does):
// same dtype, device and rank, the same sizes except at dim. Errors name the tensor's position.
Tensor cat(const std::vector<Tensor>& xs, int64_t dim);

// --- matmul (kernels/{cpu,cuda}/matmul) ---
// C = op(A) op(B), op = transpose of the last two dims when the flag is set.
// A: [M, K] or [B, M, K]; B: [K, N] or [B, K, N]; a 2-D B is shared by every batch.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b);

// --- convolution on NCHW tensors (kernels/{cpu,cuda}/conv2d); geometry: kernels/conv_geometry.h ---
// y [N, OC, OH, OW] = x [N, C, H, W] conv weight [OC, C, KH, KW] (+ bias [OC] when defined); f16 math in f32.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dArgs& args);
// dx [x_shape] = conv2d's input gradient, from dy [N, OC, OH, OW] and weight.
Tensor conv2d_backward_input(const Tensor& dy, const Tensor& weight, const Shape& x_shape, const Conv2dArgs& args);
// dweight [weight_shape] from x and dy.
Tensor conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Shape& weight_shape, const Conv2dArgs& args);
// dbias [OC]: dy [N, OC, OH, OW] summed over N, OH, OW.
Tensor conv2d_backward_bias(const Tensor& dy);

// --- pooling on NCHW tensors (kernels/{cpu,cuda}/pool2d); window math: kernels/pool_math.h ---
// Max pooling: y only, no indices (the first maximum of each window wins, NaN included:
// kernels/pool_math.h).
Tensor max_pool2d(const Tensor& x, const Pool2dArgs& args);
// dx [x's shape]: zeros with each dy added at its window's argmax, recomputed from x with
// kernels/pool_math.h's pool_argmax (so it is the element forward picked). Deterministic.
Tensor max_pool2d_backward(const Tensor& dy, const Tensor& x, const Pool2dArgs& args);
// Average pooling; the divisor counts the padding unless !args.count_include_pad (pool_divisor).
Tensor avg_pool2d(const Tensor& x, const Pool2dArgs& args);
Tensor avg_pool2d_backward(const Tensor& dy, const Shape& x_shape, const Pool2dArgs& args);

// --- batch norm and dropout (kernels/{cpu,cuda}/batch_norm, dropout) ---
// The dtype of batch norm's mean and invstd: f32 (f64 for f64 x).
inline DType batch_norm_stats_dtype(DType x) { return x == DType::f64 ? DType::f64 : DType::f32; }
// Batch statistics of x [N, C, *] per channel (formulas: kernels/batch_norm_math.h): *mean and
// *invstd [C] (batch_norm_stats_dtype). Running stats [C], when defined, are updated in place with
// momentum (unbiased variance for running_var), in double whatever their dtype, which they keep.
void batch_norm_stats(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, double momentum,
                      double eps, Tensor* mean, Tensor* invstd);
// y = (x - mean) * invstd * weight + bias per channel; weight and bias may be undefined (1 and 0).
// residual (x's shape and dtype, when defined): that + residual; relu: then max(that, 0), in the
// same pass (a ReLU fused after the batch norm; with a residual, a residual block's end).
Tensor batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& weight,
                        const Tensor& bias, bool relu = false, const Tensor& residual = Tensor());
// Gradients for the outputs that are non-null (dweight and dbias take the weight's dtype, x's without
// one). batch_stats: mean/invstd are x's own batch statistics (training), so dx includes their
// dependence on x; otherwise they are constants (eval). relu: dy is the gradient of the fused
// ReLU's output, taken where the forward's value (recomputed from x, mean, invstd, weight and
// bias) was positive.
void batch_norm_backward(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                         const Tensor& weight, bool batch_stats, Tensor* dx, Tensor* dweight, Tensor* dbias,
                         const Tensor& bias = Tensor(), bool relu = false);
// y = x * keep(i / group) / (1 - p), keep from Philox at `state` (kernels/dropout_math.h:
// dropout_apply, so a dropped inf or NaN is NaN, as in PyTorch): group 1 is dropout, a channel's
// plane (H * W) feature dropout. Backward is the same call on dy with the same state: the mask is
// recomputed, never stored. group divides x.numel() (for a non-empty x).
Tensor dropout(const Tensor& x, double p, GeneratorState state, int64_t group = 1);

#include "kernels/backend_api.inc"

}  // namespace ember::kernels
