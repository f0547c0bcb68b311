// CUDA elementwise kernels: unary and binary maps (NumPy broadcasting), sum_to,
// expand, fills and in-place updates. The per-element math is kernels/functors.h,
// the same functors kernels/cpu/elementwise.cpp calls. Every kernel is a
// grid-stride loop over flat indices; D is the storage type on the device
// (__half for f16), C the compute type (float for f16).
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/device_utils.cuh"
#include "kernels/functors.h"
#include "memory/empty.h"

namespace ember::kernels::cuda {

namespace {

// ---- kernels ----

template <class D, class C>
__global__ void unary_kernel(const D* x, D* y, int64_t n, UnaryOp op, C scalar) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) store(y, i, unary_forward<C>(op, C(load(x, i)), scalar));
}

template <class D, class C>
__global__ void unary_backward_kernel(const D* x, const D* y, const D* dy, D* dx, int64_t n, UnaryOp op, C scalar) {
  for (int64_t i = thread_index(); i < n; i += thread_count())
    store(dx, i, kernels::unary_backward<C>(op, C(load(x, i)), C(load(y, i)), C(load(dy, i)), scalar));
}

template <class D, class C>
__global__ void binary_kernel(const D* a, StridedIndex ia, const D* b, StridedIndex ib, D* c, int64_t n,
                              BinaryOp op) {
  for (int64_t i = thread_index(); i < n; i += thread_count())
    store(c, i, binary_forward<C>(op, C(load(a, ia.offset(i))), C(load(b, ib.offset(i)))));
}

template <class D, class C>
__global__ void binary_backward_kernel(const D* a, StridedIndex ia, const D* b, StridedIndex ib, const D* dy, D* d,
                                       int64_t n, BinaryOp op, bool wrt_b) {
  for (int64_t i = thread_index(); i < n; i += thread_count())
    store(d, i, binary_grad<C>(op, wrt_b, C(load(a, ia.offset(i))), C(load(b, ib.offset(i))), C(load(dy, i))));
}

template <class D, class C>
__global__ void binary_scalar_kernel(const D* a, D* c, int64_t n, BinaryOp op, C s, bool scalar_first) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    const C v = C(load(a, i));
    store(c, i, scalar_first ? binary_forward<C>(op, s, v) : binary_forward<C>(op, v, s));
  }
}

template <class D>
__global__ void expand_kernel(const D* x, StridedIndex ix, D* out, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) out[i] = x[ix.offset(i)];
}

template <class D>
__global__ void fill_kernel(D* p, int64_t n, double value) {
  D v;
  store(&v, 0, value);  // the same conversion as the CPU's (via float for f16)
  for (int64_t i = thread_index(); i < n; i += thread_count()) p[i] = v;
}

template <class D, class C>
__global__ void add_kernel(D* dst, const D* src, int64_t n, C alpha) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) store(dst, i, C(load(dst, i)) + alpha * C(load(src, i)));
}

template <class D, class C>
__global__ void mul_scalar_kernel(D* dst, int64_t n, C factor) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) store(dst, i, C(load(dst, i)) * factor);
}

// sum_to: output element r gathers x[kept.offset(r) + reduced.offset(k)] over k.
template <class D, class C>
struct SumToLift {
  const D* x;
  StridedIndex kept;
  StridedIndex reduced;
  __device__ C operator()(int64_t r, int64_t k) const { return C(load(x, kept.offset(r) + reduced.offset(k))); }
};

}  // namespace

// ---- entry points ----

// y may be x: each thread reads its element before writing it.
void unary(UnaryOp op, const Tensor& x, double scalar, const Tensor& y) {
  dispatch_floating("unary", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    launch_1d(unary_op_name(op), x.numel(), unary_kernel<device_t<T>, C>, device_data<T>(x), device_data<T>(y),
              x.numel(), op, static_cast<C>(scalar));
  });
}

void unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, double scalar, const Tensor& dx) {
  dispatch_floating("unary_backward", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    launch_1d("unary_backward", x.numel(), unary_backward_kernel<device_t<T>, C>, device_data<T>(x),
              device_data<T>(y), device_data<T>(dy), device_data<T>(dx), x.numel(), op, static_cast<C>(scalar));
  });
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& c) {
  const char* name = binary_op_name(op);
  const StridedIndex ia = broadcast_index(a.shape(), c.shape(), name);
  const StridedIndex ib = broadcast_index(b.shape(), c.shape(), name);
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d(name, c.numel(), binary_kernel<device_t<T>, compute_t<T>>, device_data<T>(a), ia, device_data<T>(b),
              ib, device_data<T>(c), c.numel(), op);
  });
}

void binary_backward(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& dy, bool wrt_b, const Tensor& d) {
  const char* name = binary_op_name(op);
  const StridedIndex ia = broadcast_index(a.shape(), dy.shape(), name);
  const StridedIndex ib = broadcast_index(b.shape(), dy.shape(), name);
  dispatch_floating("binary_backward", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d(name, d.numel(), binary_backward_kernel<device_t<T>, compute_t<T>>, device_data<T>(a), ia,
              device_data<T>(b), ib, device_data<T>(dy), device_data<T>(d), d.numel(), op, wrt_b);
  });
}

void binary_scalar(BinaryOp op, const Tensor& a, double s, bool scalar_first, const Tensor& c) {
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    launch_1d(binary_op_name(op), a.numel(), binary_scalar_kernel<device_t<T>, C>, device_data<T>(a),
              device_data<T>(c), a.numel(), op, static_cast<C>(s), scalar_first);
  });
}

void sum_to(const Tensor& x, const Tensor& out) {
  const Shape& shape = out.shape();
  // Align `shape` to x's dims; a dim is reduced where shape has 1 (or nothing) and x does not.
  const int64_t dims = x.dim(), lead = x.dim() - shape.dim();
  const std::vector<int64_t> x_strides = x.shape().strides();
  std::vector<int64_t> kept_sizes(dims), kept_strides(dims), reduced_sizes(dims);
  int64_t row_size = 1;
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t target = d < lead ? 1 : shape[d - lead];
    const bool reduced = target == 1 && x.shape()[d] != 1;
    kept_sizes[d] = target;
    kept_strides[d] = reduced ? 0 : x_strides[d];
    reduced_sizes[d] = reduced ? x.shape()[d] : 1;
    row_size *= reduced_sizes[d];
  }
  const StridedIndex kept = strided_index(kept_sizes, kept_strides, "sum_to");
  const StridedIndex reduced = strided_index(reduced_sizes, x_strides, "sum_to");
  const bool innermost_reduced = dims > 0 && reduced_sizes[dims - 1] > 1;
  dispatch_floating("sum_to", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using D = device_t<T>;
    using C = compute_t<T>;
    launch_reduce_rows("sum_to", out.numel(), row_size, innermost_reduced, SumToLift<D, C>{device_data<T>(x), kept, reduced},
                       C(0), SumCombine{}, StoreRow<D, C>{device_data<T>(out), C(1)});
  });
}

void expand(const Tensor& x, const Tensor& out) {
  const StridedIndex ix = broadcast_index(x.shape(), out.shape(), "expand");
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("expand", out.numel(), expand_kernel<device_t<T>>, device_data<T>(x), ix, device_data<T>(out),
              out.numel());
  });
}

void fill_(const Tensor& t, double value) {
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("fill_", t.numel(), fill_kernel<device_t<T>>, device_data<T>(t), t.numel(), value);
  });
}

void add_(const Tensor& dst, const Tensor& src, double alpha) {
  dispatch_floating("add_", dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    launch_1d("add_", dst.numel(), add_kernel<device_t<T>, C>, device_data<T>(dst), device_data<T>(src),
              dst.numel(), static_cast<C>(alpha));
  });
}

void mul_scalar_(const Tensor& dst, double factor) {
  dispatch_floating("mul_", dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    launch_1d("mul_", dst.numel(), mul_scalar_kernel<device_t<T>, C>, device_data<T>(dst), dst.numel(),
              static_cast<C>(factor));
  });
}

}  // namespace ember::kernels::cuda
