// CUDA comparisons: c (u8, 1 or 0) = a op b with NumPy broadcasting, or a op s, one thread per
// output element in a grid-stride loop. The per-element test is kernels/functors.h's
// compare_forward, the one the CPU loop runs; D is the storage type on the device (__half for
// f16), C the type compared in.
#include "kernels/cuda/device_utils.cuh"
#include "kernels/functors.h"

namespace ember::kernels::cuda {

namespace {

template <class D, class C>
__global__ void compare_kernel(const D* a, StridedIndex ia, const D* b, StridedIndex ib, uint8_t* c, int64_t n,
                               CompareOp op) {
  for (int64_t i = thread_index(); i < n; i += thread_count())
    c[i] = compare_forward<C>(op, C(load(a, ia.offset(i))), C(load(b, ib.offset(i))));
}

template <class D, class C>
__global__ void compare_scalar_kernel(const D* a, C s, uint8_t* c, int64_t n, CompareOp op) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) c[i] = compare_forward<C>(op, C(load(a, i)), s);
}

}  // namespace

void compare(CompareOp op, const Tensor& a, const Tensor& b, const Tensor& c) {
  const char* name = compare_op_name(op);
  const StridedIndex ia = broadcast_index(a.shape(), c.shape(), name);
  const StridedIndex ib = broadcast_index(b.shape(), c.shape(), name);
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d(name, c.numel(), compare_kernel<device_t<T>, compute_t<T>>, device_data<T>(a), ia, device_data<T>(b),
              ib, c.data<uint8_t>(), c.numel(), op);
  });
}

void compare_scalar(CompareOp op, const Tensor& a, double s, const Tensor& c) {
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compare_scalar_t<T>;
    launch_1d(compare_op_name(op), a.numel(), compare_scalar_kernel<device_t<T>, C>, device_data<T>(a),
              compare_scalar_value<T>(s), c.data<uint8_t>(), a.numel(), op);
  });
}

}  // namespace ember::kernels::cuda
