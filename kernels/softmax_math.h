#pragma once
// Math shared by the CPU and CUDA reductions and softmax family, so the two
// backends cannot drift. A reduction or softmax "along dim" sees the tensor as
// [outer, n, inner] (split_at_dim); a row is the n elements x[o, :, i]. T is the
// compute type (compute_t): float for f16/f32, double for f64.
//
//   const DimSplit s = split_at_dim(x.shape(), dim);     // row (o, i) starts at o*n*inner + i, stride inner
//   y = softmax_value(x, row_max, row_sum_exp);          // row_sum_exp = sum(exp(x - row_max))
#include <cstdint>

#include "core/hd.h"
#include "core/shape.h"
#include "kernels/functors.h"

namespace ember::kernels {

struct DimSplit {
  int64_t outer = 1;  // product of the sizes before dim
  int64_t n = 1;      // size of dim (1 for a 0-d tensor)
  int64_t inner = 1;  // product of the sizes after dim
};

// dim is already wrapped (0 for a 0-d shape).
inline DimSplit split_at_dim(const Shape& shape, int64_t dim) {
  DimSplit s;
  for (int64_t d = 0; d < shape.dim(); ++d) {
    if (d < dim) s.outer *= shape[d];
    else if (d == dim) s.n = shape[d];
    else s.inner *= shape[d];
  }
  return s;
}

// Whether v replaces cur as the running maximum: strictly greater (so ties keep
// the first), and NaN wins over numbers (max and argmax propagate NaN like PyTorch).
template <class T>
EMBER_HD bool max_takes(T v, T cur) {
  return v > cur || (v != v && cur == cur);
}

// Stable forms: subtracting the row maximum keeps every exp() in (0, 1].
template <class T>
EMBER_HD T softmax_value(T x, T row_max, T row_sum_exp) {
  return math::exp(x - row_max) / row_sum_exp;
}
template <class T>
EMBER_HD T log_softmax_value(T x, T row_max, T log_row_sum_exp) {
  return x - row_max - log_row_sum_exp;
}

// softmax: dx = y * (dy - sum(dy * y)); row_dot is that sum.
template <class T>
EMBER_HD T softmax_grad(T y, T dy, T row_dot) {
  return y * (dy - row_dot);
}
// log_softmax (y = log p): dx = dy - p * sum(dy).
template <class T>
EMBER_HD T log_softmax_grad(T y, T dy, T row_sum_dy) {
  return dy - math::exp(y) * row_sum_dy;
}
// Mean cross entropy: dlogit = (p - onehot) * dloss / N; scale = dloss / N.
template <class T>
EMBER_HD T cross_entropy_grad(T log_prob, bool is_label, T scale) {
  return (math::exp(log_prob) - (is_label ? T(1) : T(0))) * scale;
}

}  // namespace ember::kernels
