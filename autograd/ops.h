#pragma once
// The differentiable ops, as free functions (libtorch's torch::relu style). Each
// computes through kernels/ and, when grad mode is on and an input requires
// grad, records a Node (autograd/functions/*.cpp) whose backward is checked by
// gradcheck in tests/.
//
//   Tensor h = ember::relu(ember::matmul(x, w1) + b1);
//   Tensor loss = ember::cross_entropy(ember::matmul(h, w2), labels);
#include "core/tensor.h"

namespace ember {

// elementwise (functions/elementwise.cpp); binary ops broadcast like NumPy
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double s);
Tensor sub(const Tensor& a, double s);
Tensor mul(const Tensor& a, double s);
Tensor div(const Tensor& a, double s);
Tensor rsub(const Tensor& a, double s);  // s - a
Tensor rdiv(const Tensor& a, double s);  // s / a
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor pow(const Tensor& x, double exponent);
Tensor abs(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);

// reductions (functions/reduce.cpp)
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
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor reshape(const Tensor& x, const Shape& shape);

// softmax family (functions/softmax.cpp)
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
// Mean cross entropy of logits [N, C] and i64 labels [N]; fused and stable. Loss is f32.
Tensor cross_entropy(const Tensor& logits, const Tensor& labels);

// conversions (functions/convert.cpp): differentiable casts and device moves
Tensor to_dtype(const Tensor& x, DType dtype);
Tensor to_device(const Tensor& x, Device device);

}  // namespace ember
