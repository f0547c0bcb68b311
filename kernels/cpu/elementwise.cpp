// CPU elementwise kernels: unary and binary maps, broadcasting, casts, fills and
// in-place updates. The per-element math is kernels/functors.h.
#include <cstring>

#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/parallel.h"
#include "kernels/functors.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

void unary(UnaryOp op, const Tensor& x, double scalar, const Tensor& y) {
  dispatch_floating("unary", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    const C s = static_cast<C>(scalar);
    with_unary_op(op, [&](auto op_constant) {
      constexpr UnaryOp kOp = decltype(op_constant)::value;
      parallel_for(x.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = T(unary_forward<C>(kOp, C(in[i]), s));
      });
    });
  });
}

void unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, double scalar, const Tensor& dx) {
  dispatch_floating("unary_backward", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* xs = x.data<T>();
    const T* ys = y.data<T>();
    const T* dys = dy.data<T>();
    T* out = dx.data<T>();
    const C s = static_cast<C>(scalar);
    with_unary_op(op, [&](auto op_constant) {
      constexpr UnaryOp kOp = decltype(op_constant)::value;
      parallel_for(x.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          out[i] = T(kernels::unary_backward<C>(kOp, C(xs[i]), C(ys[i]), C(dys[i]), s));
      });
    });
  });
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& c) {
  const Shape& out_shape = c.shape();
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    with_binary_op(op, [&](auto op_constant) {
      constexpr BinaryOp kOp = decltype(op_constant)::value;
      using C = compute_t<T>;
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* pc = c.data<T>();
      const int64_t n = c.numel();
      if (a.shape() == out_shape && b.shape() == out_shape) {
        parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) pc[i] = T(binary_forward<C>(kOp, C(pa[i]), C(pb[i])));
        });
      } else if (b.numel() == 1 && a.shape() == out_shape) {
        const C vb = C(pb[0]);
        parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) pc[i] = T(binary_forward<C>(kOp, C(pa[i]), vb));
        });
      } else {
        const BroadcastRuns<2> runs(out_shape, {broadcast_strides(a.shape(), out_shape), broadcast_strides(b.shape(), out_shape)});
        parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
          with_steps_for<T>(runs, [&](auto sa, auto sb) {
            runs.each(begin, end, [&](int64_t i, int64_t len, const std::array<int64_t, 2>& at) {
              for (int64_t j = 0; j < len; ++j)
                pc[i + j] = T(binary_forward<C>(kOp, C(pa[at[0] + j * sa]), C(pb[at[1] + j * sb])));
            });
          });
        });
      }
    });
  });
}

void binary_backward(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& dy, bool wrt_b, const Tensor& d) {
  dispatch_floating("binary_backward", dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    const T* pdy = dy.data<T>();
    T* pd = d.data<T>();
    const BroadcastRuns<2> runs(dy.shape(), {broadcast_strides(a.shape(), dy.shape()), broadcast_strides(b.shape(), dy.shape())});
    with_binary_op(op, [&](auto op_constant) {
      constexpr BinaryOp kOp = decltype(op_constant)::value;
      parallel_for(dy.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
        with_steps_for<T>(runs, [&](auto sa, auto sb) {
          runs.each(begin, end, [&](int64_t i, int64_t len, const std::array<int64_t, 2>& at) {
            for (int64_t j = 0; j < len; ++j)
              pd[i + j] = T(binary_grad<C>(kOp, wrt_b, C(pa[at[0] + j * sa]), C(pb[at[1] + j * sb]), C(pdy[i + j])));
          });
        });
      });
    });
  });
}

void binary_scalar(BinaryOp op, const Tensor& a, double s, bool scalar_first, const Tensor& c) {
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* pa = a.data<T>();
    T* pc = c.data<T>();
    const C v = static_cast<C>(s);
    parallel_for(a.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        pc[i] = T(scalar_first ? binary_forward<C>(op, v, C(pa[i])) : binary_forward<C>(op, C(pa[i]), v));
    });
  });
}

void sum_to(const Tensor& x, const Tensor& out) {
  const Shape& shape = out.shape();
  dispatch_floating("sum_to", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    std::vector<C> acc(static_cast<size_t>(out.numel()), C(0));
    // Sequential on purpose: every element of out sums its terms in x's order, deterministic. x is
    // walked in order, a row of its last dim at a time (out's matching row, or one element of out).
    const BroadcastRuns<1> runs(x.shape(), {broadcast_strides(shape, x.shape())});
    const T* in = x.data<T>();
    runs.each(0, x.numel(), [&](int64_t i, int64_t len, const std::array<int64_t, 1>& at) {
      C* a = acc.data() + at[0];
      if (runs.step(0) == 0) {
        C sum = *a;
        for (int64_t j = 0; j < len; ++j) sum += C(in[i + j]);
        *a = sum;
      } else {
        for (int64_t j = 0; j < len; ++j) a[j] += C(in[i + j]);
      }
    });
    T* o = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = T(acc[static_cast<size_t>(i)]);
  });
}

void expand(const Tensor& x, const Tensor& out) {
  const Shape& shape = out.shape();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const BroadcastRuns<1> runs(shape, {broadcast_strides(x.shape(), shape)});
    const T* in = x.data<T>();
    T* o = out.data<T>();
    parallel_for(out.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      with_steps_for<T>(runs, [&](auto step) {
        runs.each(begin, end, [&](int64_t i, int64_t len, const std::array<int64_t, 1>& at) {
          for (int64_t j = 0; j < len; ++j) o[i + j] = in[at[0] + j * step];
        });
      });
    });
  });
}

namespace {
// Converts through double (exact for every supported dtype but i64 beyond 2^53).
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, Half>) return Half(static_cast<float>(v));
  else if constexpr (std::is_same_v<From, Half>) return static_cast<To>(static_cast<float>(v));
  else return static_cast<To>(v);
}

void cast_into(const Tensor& dst, const Tensor& src) {
  dispatch_dtype(src.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    dispatch_dtype(dst.dtype(), [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* in = src.data<From>();
      To* out = dst.data<To>();
      if constexpr (std::is_same_v<From, To>) {
        if (src.nbytes() != 0) std::memcpy(out, in, src.nbytes());  // an empty tensor may have no storage: memcpy(null) is UB
      } else {
        parallel_for(src.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) out[i] = convert<To>(in[i]);
        });
      }
    });
  });
}
}  // namespace

void cast(const Tensor& x, const Tensor& y) { cast_into(y, x); }

void copy_(const Tensor& dst, const Tensor& src) { cast_into(dst, src); }

void fill_(const Tensor& t, double value) {
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = convert<T>(value);
    T* p = t.data<T>();
    parallel_for(t.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) p[i] = v;
    });
  });
}

void add_(const Tensor& dst, const Tensor& src, double alpha) {
  dispatch_floating("add_", dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    T* d = dst.data<T>();
    const T* s = src.data<T>();
    const C a = static_cast<C>(alpha);
    parallel_for(dst.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) d[i] = T(C(d[i]) + a * C(s[i]));
    });
  });
}

void mul_scalar_(const Tensor& dst, double factor) {
  dispatch_floating("mul_", dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    T* d = dst.data<T>();
    const C f = static_cast<C>(factor);
    parallel_for(dst.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) d[i] = T(C(d[i]) * f);
    });
  });
}

}  // namespace ember::kernels::cpu
