// CPU softmax family: softmax and log_softmax along any dim, their backwards,
// and the fused mean cross entropy. A row is x[o, :, i] of the [outer, n, inner]
// view (split_at_dim); rows run in parallel, each in C = compute_t<T> precision
// with its maximum subtracted first, using the formulas of kernels/softmax_math.h
// that the CUDA backend shares.
#include <algorithm>
#include <vector>

#include "kernels/cpu/parallel.h"
#include "kernels/softmax_math.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

namespace {

// Calls fn(offset of the row's first element) for every row, in parallel; the
// row's elements are offset + k * s.inner for k < s.n.
template <class Fn>
void for_each_row(const DimSplit& s, const Fn& fn) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, s.n));
  parallel_for(s.outer * s.inner, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) fn((r / s.inner) * s.n * s.inner + r % s.inner);
  });
}

template <class C>
struct RowStats {
  C max;
  C sum_exp;  // sum(exp(x - max)), >= 1 unless the row holds NaN
};

// One row of n >= 1 elements, `stride` apart.
template <class T, class C = compute_t<T>>
RowStats<C> row_stats(const T* row, int64_t n, int64_t stride) {
  C max = C(row[0]);
  for (int64_t k = 1; k < n; ++k)
    if (max_takes(C(row[k * stride]), max)) max = C(row[k * stride]);
  C sum = 0;
  for (int64_t k = 0; k < n; ++k) sum += math::exp(C(row[k * stride]) - max);
  return {max, sum};
}

// Writes log_softmax(row) to dst (same layout); returns log(sum(exp(x - max))).
template <class T, class C = compute_t<T>>
C write_log_softmax_row(const T* row, T* dst, int64_t n, int64_t stride, const RowStats<C>& st) {
  const C log_sum = math::log(st.sum_exp);
  for (int64_t k = 0; k < n; ++k) dst[k * stride] = T(log_softmax_value(C(row[k * stride]), st.max, log_sum));
  return log_sum;
}

template <bool kLog>
void softmax_forward(const Tensor& x, int64_t dim, const char* op, const Tensor& y) {
  const DimSplit s = split_at_dim(x.shape(), dim);
  dispatch_floating(op, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for_each_row(s, [&](int64_t base) {
      const RowStats<C> st = row_stats(in + base, s.n, s.inner);
      if (kLog) {
        write_log_softmax_row(in + base, out + base, s.n, s.inner, st);
      } else {
        for (int64_t k = 0, at = base; k < s.n; ++k, at += s.inner)
          out[at] = T(softmax_value(C(in[at]), st.max, st.sum_exp));
      }
    });
  });
}

// dx from y and dy, one row at a time: the row reduction is sum(dy * y) for
// softmax and sum(dy) for log_softmax.
template <bool kLog>
void softmax_backward_rows(const Tensor& y, const Tensor& dy, int64_t dim, const char* op, const Tensor& dx) {
  const DimSplit s = split_at_dim(y.shape(), dim);
  dispatch_floating(op, y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* ys = y.data<T>();
    const T* dys = dy.data<T>();
    T* out = dx.data<T>();
    for_each_row(s, [&](int64_t base) {
      C acc = 0;
      for (int64_t k = 0, at = base; k < s.n; ++k, at += s.inner) acc += kLog ? C(dys[at]) : C(dys[at]) * C(ys[at]);
      for (int64_t k = 0, at = base; k < s.n; ++k, at += s.inner)
        out[at] = T(kLog ? log_softmax_grad(C(ys[at]), C(dys[at]), acc) : softmax_grad(C(ys[at]), C(dys[at]), acc));
    });
  });
}

}  // namespace

void softmax(const Tensor& x, int64_t dim, const Tensor& y) { softmax_forward<false>(x, dim, "softmax", y); }
void log_softmax(const Tensor& x, int64_t dim, const Tensor& y) { softmax_forward<true>(x, dim, "log_softmax", y); }

void softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim, const Tensor& dx) {
  softmax_backward_rows<false>(y, dy, dim, "softmax_backward", dx);
}
void log_softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim, const Tensor& dx) {
  softmax_backward_rows<true>(y, dy, dim, "log_softmax_backward", dx);
}

void cross_entropy(const Tensor& logits, const Tensor& labels, const Tensor& lp, const Tensor& loss) {
  const int64_t samples = logits.size(0), classes = logits.size(1);
  std::vector<double> sample_loss(static_cast<size_t>(samples));
  dispatch_floating("cross_entropy", logits.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* in = logits.data<T>();
    T* out = lp.data<T>();
    const int64_t* label = labels.data<int64_t>();
    // The loss takes the label's log-probability before it is rounded to T.
    for_each_row(DimSplit{samples, classes, 1}, [&](int64_t base) {
      const int64_t n = base / classes;
      const RowStats<C> st = row_stats(in + base, classes, 1);
      const C log_sum = write_log_softmax_row(in + base, out + base, classes, 1, st);
      sample_loss[static_cast<size_t>(n)] = -static_cast<double>(log_softmax_value(C(in[base + label[n]]), st.max, log_sum));
    });
  });
  double total = 0.0;
  for (double l : sample_loss) total += l;  // in sample order: deterministic
  if (loss.dtype() == DType::f64)
    loss.data<double>()[0] = total / static_cast<double>(samples);
  else
    loss.data<float>()[0] = static_cast<float>(total / static_cast<double>(samples));
}

void cross_entropy_backward(const Tensor& log_probs, const Tensor& labels, const Tensor& dloss, const Tensor& dlogits) {
  const int64_t samples = log_probs.size(0), classes = log_probs.size(1);
  const double dl = dispatch_floating("cross_entropy_backward", dloss.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(compute_t<T>(dloss.data<T>()[0]));
  });
  dispatch_floating("cross_entropy_backward", log_probs.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* lp = log_probs.data<T>();
    const int64_t* label = labels.data<int64_t>();
    T* out = dlogits.data<T>();
    const C scale = static_cast<C>(dl / static_cast<double>(samples));
    parallel_for(log_probs.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        out[i] = T(cross_entropy_grad(C(lp[i]), i % classes == label[i / classes], scale));
    });
  });
}

}  // namespace ember::kernels::cpu
