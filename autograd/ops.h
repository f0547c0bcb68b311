#pragma once
// The differentiable ops, as free functions (libtorch's torch::relu style). Each
// computes through kernels/ and, when grad mode is on and an input requires
// grad, records a Node (autograd/functions/*.cpp) whose backward is checked by
// gradcheck in tests/.
//
//   Tensor h = ember::relu(ember::matmul(x, w1) + b1);
//   Tensor loss = ember::cross_entropy(ember::matmul(h, w2), labels);
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "kernels/conv_geometry.h"  // Size2

namespace ember::kernels {
enum class UnaryOp : uint8_t;   // kernels/ops.h
enum class BinaryOp : uint8_t;  // kernels/ops.h
}

namespace ember {

// elementwise (functions/elementwise.cpp); binary ops broadcast like NumPy
// The public binary ops of core/binary_ops.def, one line each there: add, sub, mul, div.
#define EMBER_BINARY_OP(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads)
#define EMBER_BINARY_OP_PUBLIC(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads) \
  Tensor name(const Tensor& a, const Tensor& b);
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP_PUBLIC
#undef EMBER_BINARY_OP
Tensor add(const Tensor& a, double s);
Tensor sub(const Tensor& a, double s);
Tensor mul(const Tensor& a, double s);
Tensor div(const Tensor& a, double s);
Tensor rsub(const Tensor& a, double s);  // s - a
Tensor rdiv(const Tensor& a, double s);  // s / a
Tensor pow(const Tensor& x, double exponent);
// The public unary ops of core/unary_ops.def, one line each there:
// neg, exp, log, sqrt, relu, sigmoid, tanh, abs, gelu, silu.
#define EMBER_UNARY_OP(name, forward, derivative, saves)
#define EMBER_UNARY_OP_PUBLIC(name, forward, derivative, saves) Tensor name(const Tensor& x);
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
// Comparisons, core/compare_ops.def, one line each there: eq, ne, lt, le, gt, ge
// (functions/compare.cpp). A u8 tensor of 1 (true) and 0, never differentiable: tensor-tensor with
// NumPy broadcasting (same dtype and device), or against a number (rounded to a floating tensor's
// dtype, as PyTorch does with a Python number; compared in double with an integer tensor). Summing
// one counts its ones in i64: pred.eq(labels).sum().item<int64_t>().
#define EMBER_COMPARE_OP(name, forward) \
  Tensor name(const Tensor& a, const Tensor& b);  \
  Tensor name(const Tensor& a, double s);
#include "core/compare_ops.def"
#undef EMBER_COMPARE_OP
// Any op of the tables by its enum (the op-contract test walks the unary table with it; the
// losses compose the ops that are not public); `scalar` is the unary op's argument (pow's
// exponent, smooth_l1's beta, huber's delta).
Tensor unary_op(kernels::UnaryOp op, const Tensor& x, double scalar = 0.0);
Tensor binary_op(kernels::BinaryOp op, const Tensor& a, const Tensor& b);
// Reusing forms, chosen for a temporary argument: when nothing else holds its bytes (no
// other handle, view or saved alias), the result is written into them, so a residual
// block's relu(add(bn(conv(h)), x)) allocates one tensor instead of two. Same values.
Tensor relu(Tensor&& x);
Tensor add(Tensor&& a, const Tensor& b);

// reductions (functions/reduce.cpp); sum of an integer tensor (u8, i64) is i64, as in PyTorch
Tensor sum(const Tensor& x);
Tensor sum(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);
Tensor max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x);                                     // not differentiable
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);  // not differentiable

// linear algebra and layout (functions/matmul.cpp, functions/shape.cpp)
Tensor matmul(const Tensor& a, const Tensor& b);  // [M,K]x[K,N], [B,M,K]x[B,K,N], [B,M,K]x[K,N]
Tensor mm(const Tensor& a, const Tensor& b);      // [M,K]x[K,N] only; other shapes throw naming both
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor reshape(const Tensor& x, const Shape& shape);

// slicing and joining, libtorch's semantics (functions/slice.cpp, functions/shape.cpp,
// functions/cat.cpp); a negative dim counts from the end. narrow, select and slice return a view
// of x's storage when the elements they take are one contiguous run of it (along dim 0, or a dim
// after only size-1 dims, with step 1) and a copy otherwise; unsqueeze and squeeze are views
// (reshape); permute, cat and stack copy.
//   ember::narrow(x, 1, 2, 3)            // x[:, 2:5]; a negative start counts from the end
//   ember::select(x, 0, -1)              // x[-1]: the dim is dropped
//   ember::slice(x, 1, -4, INT64_MAX, 2) // x[:, -4::2]; start and end clamp like Python's
//   ember::cat({a, b}, 0); ember::stack({a, b}, -1); x.permute({2, 0, 1}); x.unsqueeze(0)
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
// x[start:end:step] along dim, step >= 1 (libtorch's index({Slice(start, end, step)})).
Tensor slice(const Tensor& x, int64_t dim = 0, int64_t start = 0, int64_t end = INT64_MAX, int64_t step = 1);
Tensor unsqueeze(const Tensor& x, int64_t dim);  // dim in [-(x.dim() + 1), x.dim()]
Tensor squeeze(const Tensor& x);                 // drops every size-1 dim
Tensor squeeze(const Tensor& x, int64_t dim);    // drops dim if its size is 1; x's shape otherwise
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
// Joins along dim; the sizes match except at dim. A 1-D empty tensor [0] is left out, as in
// libtorch, so cat({ember::empty({0}), x}) is a copy of x (and the [0] gets an empty gradient).
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Joins tensors of one shape along a new dim, in [-(n + 1), n] for n-dim tensors: unsqueeze + cat.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// y = x W^T + b (functions/linear.cpp): x [..., in], weight [out, in], bias [out] or undefined.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// softmax family (functions/softmax.cpp)
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// losses (functions/loss.cpp, softmax.cpp), with PyTorch's argument order and `reduction`: the
// mean of the terms (the default), their sum, or none (the terms themselves: the input's shape,
// or [N] for nll_loss and cross_entropy). The classification losses' mean with class weights
// w is sum_i w[y_i] l_i / sum_i w[y_i], as in PyTorch.
//   ember::nll_loss(output, targets, /*weight=*/{}, ember::Reduction::Sum)   // libtorch's MNIST test loss
//   ember::smooth_l1_loss(y, t)                                               // beta 1, mean
enum class Reduction : uint8_t { None, Mean, Sum };
inline constexpr Reduction kNone = Reduction::None;  // libtorch's torch::kNone, kMean, kSum
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;
const char* reduction_name(Reduction reduction);  // "none", "mean", "sum"

// Cross entropy of logits [N, C] and i64 labels [N] in [0, C), with optional class weights [C]:
// log_softmax then nll_loss. The unweighted mean is one fused, stable kernel whose loss is f32
// (f64 for f64 logits); the other forms compose log_softmax and nll_loss and keep the dtype.
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, const Tensor& weight = Tensor(),
                     Reduction reduction = Reduction::Mean);
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Reduction reduction);
// -log_probs[i, labels[i]] (times weight[labels[i]]) for log_probs [N, C] (e.g. log_softmax(logits,
// 1)) and i64 labels [N] in [0, C): nll_loss(log_softmax(x, 1), y) equals cross_entropy(x, y).
Tensor nll_loss(const Tensor& log_probs, const Tensor& labels, const Tensor& weight = Tensor(),
                Reduction reduction = Reduction::Mean);
Tensor nll_loss(const Tensor& log_probs, const Tensor& labels, Reduction reduction);
// Elementwise losses of input and target of one shape and dtype: (input - target)^2,
// |input - target|, smooth L1 (0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta; beta >= 0,
// 0 is l1_loss) and Huber (0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta); delta > 0).
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0);
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                  double delta = 1.0);
// -(t log p + (1 - t) log(1 - p)) for probabilities p in [0, 1] (each log clamped to >= -100,
// as PyTorch does; a p outside [0, 1] gives NaN, where PyTorch's CPU throws), times `weight`
// (broadcast to p) when given.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                            Reduction reduction = Reduction::Mean);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction);
// The same of sigmoid(logits), in the stable form (1 - t) x + softplus(-x) (never log(0)); with
// pos_weight (broadcast to x, e.g. [C]) the positive term is scaled: (1 - t) x + (1 + (pw - 1) t)
// softplus(-x), PyTorch's formula.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor(), Reduction reduction = Reduction::Mean);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, Reduction reduction);

// conversions (functions/convert.cpp): differentiable casts and device moves
Tensor to_dtype(const Tensor& x, DType dtype);
Tensor to_device(const Tensor& x, Device device);

// CNN ops on NCHW tensors (functions/conv2d.cpp, pool2d.cpp, batch_norm.cpp, dropout.cpp).
// Size2 is (h, w); one number means both: conv2d(x, w, b, /*stride=*/2, /*padding=*/1).
// x [N, C, H, W], weight [OC, C, KH, KW], bias [OC] or undefined -> [N, OC, OH, OW]; groups = 1.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), Size2 stride = 1,
              Size2 padding = 0, Size2 dilation = 1);
// Pooling windows, libtorch's arguments; the stride defaults to the kernel. Padding is at most half
// the kernel. ceil_mode rounds the output size up, PyTorch's way: a last window that would start
// past the input and its left padding is left out. Max pooling's dilation must be 1.
Tensor max_pool2d(const Tensor& x, Size2 kernel);
Tensor max_pool2d(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding = 0, Size2 dilation = 1,
                  bool ceil_mode = false);
// Average pooling counts the zero padding in the divisor (count_include_pad, PyTorch's default),
// or only the input values of each window (count_include_pad = false).
Tensor avg_pool2d(const Tensor& x, Size2 kernel);
Tensor avg_pool2d(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding = 0, bool ceil_mode = false,
                  bool count_include_pad = true);
// Mean over H and W: [N, C, H, W] -> [N, C, 1, 1] (adaptive average pooling to 1x1).
Tensor global_avg_pool2d(const Tensor& x);
// Batch normalisation over dim 1 of x [N, C, ...]. training: batch statistics, and the running
// ones [C] (when defined) are updated in place with momentum, except while a checkpointed segment
// is recomputed; eval: the running statistics. Statistics are fp32 (fp64 for f64 x).
// weight and bias [C] may be undefined (1 and 0).
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum = 0.1, double eps = 1e-5);
// relu(batch_norm(...)), fused: one pass forward, and backward masks the gradient inside batch
// norm's own two passes (no ReLU pass, no second activation). Equal, bit for bit, to the two ops.
Tensor batch_norm_relu(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                       const Tensor& running_var, bool training, double momentum = 0.1, double eps = 1e-5);
// relu(add(batch_norm(x, ...), residual)), the end of a residual block, fused: one pass forward
// (the three ops' backward passes stay). Equal, bit for bit, to the three ops.
Tensor batch_norm_add_relu(const Tensor& x, const Tensor& residual, const Tensor& weight, const Tensor& bias,
                           const Tensor& running_mean, const Tensor& running_var, bool training,
                           double momentum = 0.1, double eps = 1e-5);
// Zeroes each element with probability p (Philox, global generator) and scales the rest by
// 1 / (1 - p); identity when !training or p == 0. Backward redraws the same mask.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);
// The same per channel (PyTorch's feature_dropout, Dropout2d): every value of a channel
// x[n, c, ...] is zeroed together, or kept and scaled by 1 / (1 - p). feature_dropout takes
// x [N, C, ...]; dropout2d takes [N, C, H, W], or one image [C, H, W] whose channels are x[c].
Tensor feature_dropout(const Tensor& x, double p = 0.5, bool training = true);
Tensor dropout2d(const Tensor& x, double p = 0.5, bool training = true);

}  // namespace ember
