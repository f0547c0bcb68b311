// CPU comparisons: c (u8, 1 or 0) = a op b with NumPy broadcasting, or a op s. The per-element
// test is kernels/functors.h's compare_forward, the one the CUDA kernels run.
//
//   cpu::compare(CompareOp::eq, pred, labels, c);   // c[i] = pred[i] == labels[i]
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/parallel.h"
#include "kernels/functors.h"

namespace ember::kernels::cpu {

void compare(CompareOp op, const Tensor& a, const Tensor& b, const Tensor& c) {
  const Shape& out_shape = c.shape();
  uint8_t* pc = c.data<uint8_t>();
  const int64_t n = c.numel();
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    with_compare_op(op, [&](auto op_constant) {
      constexpr CompareOp kOp = decltype(op_constant)::value;
      if (a.shape() == out_shape && b.shape() == out_shape) {
        parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) pc[i] = compare_forward<C>(kOp, C(pa[i]), C(pb[i]));
        });
        return;
      }
      const BroadcastRuns<2> runs(out_shape, {broadcast_strides(a.shape(), out_shape), broadcast_strides(b.shape(), out_shape)});
      parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
        with_steps_for<T>(runs, [&](auto sa, auto sb) {
          runs.each(begin, end, [&](int64_t i, int64_t len, const std::array<int64_t, 2>& at) {
            for (int64_t j = 0; j < len; ++j) pc[i + j] = compare_forward<C>(kOp, C(pa[at[0] + j * sa]), C(pb[at[1] + j * sb]));
          });
        });
      });
    });
  });
}

void compare_scalar(CompareOp op, const Tensor& a, double s, const Tensor& c) {
  uint8_t* pc = c.data<uint8_t>();
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compare_scalar_t<T>;
    const C v = compare_scalar_value<T>(s);
    const T* pa = a.data<T>();
    with_compare_op(op, [&](auto op_constant) {
      constexpr CompareOp kOp = decltype(op_constant)::value;
      parallel_for(a.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) pc[i] = compare_forward<C>(kOp, C(pa[i]), v);
      });
    });
  });
}

}  // namespace ember::kernels::cpu
