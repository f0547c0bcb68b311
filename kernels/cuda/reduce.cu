// CUDA reductions: sum/mean/max over everything or along one dim, argmax, and
// the scatter that routes max's gradient back. Values accumulate in the compute
// type (fp32 for f16 and f32, fp64 for f64; integer sums exactly in i64). Every reduction is deterministic:
// fixed grids and a fixed tree order (kernels/cuda/block_reduce.cuh).
//
// Along a dim, x is viewed as [outer, n, inner]: output row r = (o, i) reduces
// x[o, k, i] over k. A reduction over everything is the one row [1, n, 1], done
// in two passes: up to kMaxPartials blocks each reduce a slice into a partial,
// then one block reduces the partials and stores the 0-d result on the device.
#include <algorithm>
#include <limits>
#include <type_traits>

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember::kernels::cuda {

namespace {

// ---- device math ----

// Element (r, k) of x viewed as [outer, n, inner] (split_at_dim, shared with the CPU), rows r = (o, i).
struct DimLayout {
  DimSplit s;
  __device__ __forceinline__ int64_t offset(int64_t r, int64_t k) const {
    return (r / s.inner) * s.n * s.inner + r % s.inner + k * s.inner;
  }
};

template <class D, class C>
struct ValueLift {
  const D* x;
  DimLayout layout;
  __device__ C operator()(int64_t r, int64_t k) const { return C(load(x, layout.offset(r, k))); }
};

// index < 0 marks "no element yet", so no sentinel value is needed for any dtype.
template <class C>
struct ArgMaxPair {
  C value;
  int64_t index;
};

// The larger value wins (max_takes: NaN included, as on the CPU); on a tie the
// smaller index, so the result is the first maximum in any combining order.
struct ArgMaxCombine {
  template <class P> __device__ P operator()(P a, P b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    return (max_takes(b.value, a.value) || (!max_takes(a.value, b.value) && b.index < a.index)) ? b : a;
  }
};

template <class D, class C>
struct ArgMaxLift {
  const D* x;
  DimLayout layout;
  __device__ ArgMaxPair<C> operator()(int64_t r, int64_t k) const {
    return ArgMaxPair<C>{C(load(x, layout.offset(r, k))), k};
  }
};

template <class C>
struct StoreIndex {
  int64_t* out;
  __device__ void operator()(int64_t r, ArgMaxPair<C> best) const { out[r] = best.index; }
};

// Second pass of a full reduction: the partials are one row.
template <class V>
struct PartialsLift {
  const V* partials;
  __device__ V operator()(int64_t, int64_t k) const { return partials[k]; }
};

// ---- kernels ----

// First pass: block b reduces its grid-stride slice of row 0 into partials[b].
template <class V, class Lift, class Combine>
__global__ void reduce_partials_kernel(int64_t n, Lift lift, V identity, Combine combine, V* partials) {
  V acc = identity;
  for (int64_t k = thread_index(); k < n; k += thread_count()) acc = combine(acc, lift(0, k));
  acc = block_reduce(acc, combine);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// out = 0 everywhere, then out[o, indices[o, 0, i], i] = dy[o, 0, i]. The entry point has rejected
// out-of-range indices (kernels/dispatch_reduce.cpp); the guard only keeps a direct backend call in bounds.
template <class D>
__global__ void scatter_dim_kernel(const D* dy, const int64_t* indices, D* out, int64_t n, int64_t size,
                                   int64_t inner) {
  for (int64_t j = thread_index(); j < n; j += thread_count()) {
    const int64_t k = indices[j];
    if (k >= 0 && k < size) out[(j / inner) * size * inner + k * inner + j % inner] = dy[j];
  }
}

// ---- launchers ----

constexpr int64_t kMaxPartials = 1024;


// Two passes over row 0 of `lift` (n elements); finish(0, total) stores the result.
template <class V, class Lift, class Combine, class Finish>
void reduce_everything(const char* name, Device device, int64_t n, Lift lift, V identity, Combine combine,
                       Finish finish) {
  const int64_t blocks = std::min<int64_t>(blocks_for(n), kMaxPartials);
  const Tensor scratch = empty(Shape{blocks * static_cast<int64_t>(sizeof(V))}, TensorOptions(kUInt8).device(device));
  V* partials = reinterpret_cast<V*>(scratch.data_ptr());
  reduce_partials_kernel<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, current_stream()>>>(
      n, lift, identity, combine, partials);
  EMBER_CUDA_CHECK_LAUNCH(name);
  launch_reduce_rows(name, 1, blocks, true, PartialsLift<V>{partials}, identity, combine, finish);
  // scratch goes back to the allocator now; the kernels above are ordered before any
  // later use of its bytes on the same stream.
}

template <class C>
C reduce_identity(ReduceOp op) {
  return op == ReduceOp::max ? -std::numeric_limits<C>::infinity() : C(0);
}

// The sum of an integer x (u8, i64) into the i64 out, exactly: over everything (along == nullptr)
// or along a dim. The entry point allows only sums of integers.
void integer_sum(const Tensor& x, const DimLayout* along, const Tensor& out) {
  const int64_t n = x.numel();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const StoreRow<int64_t, int64_t> finish{out.data<int64_t>(), 1};
      if (along == nullptr) {
        reduce_everything("sum", x.device(), n, ValueLift<T, int64_t>{x.data<T>(), DimLayout{DimSplit{1, n, 1}}},
                          int64_t{0}, SumCombine{}, finish);
      } else {
        launch_reduce_rows("sum", along->s.outer * along->s.inner, along->s.n, along->s.inner == 1,
                           ValueLift<T, int64_t>{x.data<T>(), *along}, int64_t{0}, SumCombine{}, finish);
      }
    }
  });
}

}  // namespace

void reduce_all(ReduceOp op, const Tensor& x, const Tensor& out) {
  const int64_t n = x.numel();
  const DimLayout layout{DimSplit{1, n, 1}};
  if (!is_floating(x.dtype())) return integer_sum(x, nullptr, out);
  dispatch_floating("reduce", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using D = device_t<T>;
    using C = compute_t<T>;
    const ValueLift<D, C> lift{device_data<T>(x), layout};
    const StoreRow<D, C> finish{device_data<T>(out), op == ReduceOp::mean ? C(n) : C(1)};
    if (op == ReduceOp::max) reduce_everything("max", x.device(), n, lift, reduce_identity<C>(op), MaxCombine{}, finish);
    else reduce_everything("sum", x.device(), n, lift, reduce_identity<C>(op), SumCombine{}, finish);
  });
}

void reduce_dim(ReduceOp op, const Tensor& x, int64_t dim, const Tensor& out) {
  const DimLayout layout{split_at_dim(x.shape(), dim)};
  if (!is_floating(x.dtype())) return integer_sum(x, &layout, out);
  const int64_t rows = layout.s.outer * layout.s.inner;
  dispatch_floating("reduce", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using D = device_t<T>;
    using C = compute_t<T>;
    const ValueLift<D, C> lift{device_data<T>(x), layout};
    const StoreRow<D, C> finish{device_data<T>(out), op == ReduceOp::mean ? C(layout.s.n) : C(1)};
    const bool contiguous = layout.s.inner == 1;
    if (op == ReduceOp::max)
      launch_reduce_rows("max", rows, layout.s.n, contiguous, lift, reduce_identity<C>(op), MaxCombine{}, finish);
    else
      launch_reduce_rows("sum", rows, layout.s.n, contiguous, lift, reduce_identity<C>(op), SumCombine{}, finish);
  });
}

void argmax_all(const Tensor& x, const Tensor& out) {
  const int64_t n = x.numel();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    reduce_everything("argmax", x.device(), n, ArgMaxLift<device_t<T>, C>{device_data<T>(x), DimLayout{DimSplit{1, n, 1}}},
                      ArgMaxPair<C>{C(0), -1}, ArgMaxCombine{}, StoreIndex<C>{out.data<int64_t>()});
  });
}

void argmax_dim(const Tensor& x, int64_t dim, const Tensor& out) {
  const DimLayout layout{split_at_dim(x.shape(), dim)};
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    launch_reduce_rows("argmax", layout.s.outer * layout.s.inner, layout.s.n, layout.s.inner == 1,
                       ArgMaxLift<device_t<T>, C>{device_data<T>(x), layout}, ArgMaxPair<C>{C(0), -1},
                       ArgMaxCombine{}, StoreIndex<C>{out.data<int64_t>()});
  });
}

void scatter_dim(const Tensor& dy, const Tensor& indices, int64_t dim, const Tensor& out) {
  EMBER_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, out.nbytes(), current_stream()));  // 0 bits: 0 in every dtype
  const DimSplit split = split_at_dim(out.shape(), dim);
  dispatch_dtype(dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_1d("scatter_dim", dy.numel(), scatter_dim_kernel<device_t<T>>, device_data<T>(dy),
              indices.data<int64_t>(), device_data<T>(out), dy.numel(), split.n, split.inner);
  });
}

}  // namespace ember::kernels::cuda
