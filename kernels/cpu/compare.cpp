// CPU comparisons: c (u8, 1 or 0) = a op b with NumPy broadcasting, or a op s. The per-element
// test is kernels/functors.h's compare_forward, the one the CUDA kernels run.
//
//   cpu::compare(CompareOp::eq, pred, labels, c);   // c[i] = pred[i] == labels[i]
//
// Each loop reads its pointers and the scalar from locals of its own: a u8 store may alias
// anything, a captured pointer too, so the compiler reloaded them every element and did not
// vectorise (eq of two f32 [64, 16, 28, 28] tensors, one thread: 1.9 -> 0.15 ms).
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
          const T *x = pa, *y = pb;
          uint8_t* out = pc;
          for (int64_t i = begin; i < end; ++i) out[i] = compare_forward<C>(kOp, C(x[i]), C(y[i]));
        });
        return;
      }
      const BroadcastRuns<2> runs(out_shape, {broadcast_strides(a.shape(), out_shape), broadcast_strides(b.shape(), out_shape)});
      parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
        with_steps_for<T>(runs, [&](auto sa, auto sb) {
          runs.each(begin, end, [&](int64_t i, int64_t len, const std::array<int64_t, 2>& at) {
            const T *x = pa + at[0], *y = pb + at[1];
            uint8_t* out = pc + i;
            for (int64_t j = 0; j < len; ++j) out[j] = compare_forward<C>(kOp, C(x[j * sa]), C(y[j * sb]));
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
        const T* x = pa;
        uint8_t* out = pc;
        const C value = v;
        for (int64_t i = begin; i < end; ++i) out[i] = compare_forward<C>(kOp, C(x[i]), value);
      });
    });
  });
}

}  // namespace ember::kernels::cpu
