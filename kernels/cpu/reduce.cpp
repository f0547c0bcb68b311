// CPU reductions: sum, mean, max and argmax over all elements or along one dim,
// and scatter_dim (the backward of max). Sums accumulate in double whatever the
// floating dtype (an f32 sum is then as exact as its output can hold); integer sums in i64. The summation
// order is fixed (contiguous runs in kLanes interleaved lanes, strided rows in
// index order, reduce_all's fixed-size blocks then their partials in block
// order), so results never depend on the thread count.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/parallel.h"
#include "kernels/softmax_math.h"
#include "memory/empty.h"

namespace ember::kernels::cpu {

namespace {

constexpr int64_t kBlockElements = 4096;  // reduce_all: elements per partial result
constexpr int64_t kColumnTile = 64;       // reduce_dim, inner > 1: outputs that walk their rows together
constexpr int64_t kLanes = 8;             // contiguous folds: independent accumulators

struct SumAcc {
  double sum = 0.0;
  template <class V>
  void add(V v, int64_t) { sum += static_cast<double>(v); }
  void merge(const SumAcc& o) { sum += o.sum; }
};

// Integer sums (u8 comparisons, i64 counts) are exact in i64.
struct IntSumAcc {
  int64_t sum = 0;
  template <class V>
  void add(V v, int64_t) { sum += static_cast<int64_t>(v); }
  void merge(const IntSumAcc& o) { sum += o.sum; }
};

// The first maximum and its index (along the row, or flat for reduce_all).
template <class C>
struct MaxAcc {
  C value{};
  int64_t index = -1;  // -1: nothing seen yet
  void add(C v, int64_t k) {
    if (index < 0 || max_takes(v, value)) {
      value = v;
      index = k;
    }
  }
  void merge(const MaxAcc& o) {  // in any order: a tie (NaN ties included) goes to the lower index
    if (o.index < 0) return;
    if (index < 0 || max_takes(o.value, value) || (!max_takes(value, o.value) && o.index < index)) {
      value = o.value;
      index = o.index;
    }
  }
};

// Folds x[0, n) (whose first element has index first_index) into one Acc. Lanes
// take every kLanes-th element and merge in lane order: independent chains hide
// the add latency, and the order stays fixed.
template <class Acc, class T>
Acc fold_contiguous(const T* x, int64_t n, int64_t first_index) {
  using C = compute_t<T>;
  Acc lane[kLanes];
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lane[j].add(C(x[k + j]), first_index + k + j);
  for (; k < n; ++k) lane[0].add(C(x[k]), first_index + k);
  for (int64_t j = 1; j < kLanes; ++j) lane[0].merge(lane[j]);
  return lane[0];
}

// Folds all n elements of x (flat indices) into one Acc.
template <class Acc, class T>
Acc reduce_flat(const T* x, int64_t n) {
  const int64_t blocks = (n + kBlockElements - 1) / kBlockElements;
  std::vector<Acc> partial(static_cast<size_t>(blocks));
  parallel_for(blocks, std::max<int64_t>(1, kParallelGrain / kBlockElements), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t begin = b * kBlockElements;
      partial[static_cast<size_t>(b)] = fold_contiguous<Acc>(x + begin, std::min(n - begin, kBlockElements), begin);
    }
  });
  Acc total;
  for (const Acc& p : partial) total.merge(p);
  return total;
}

// x seen as [outer, n, inner]: folds each row x[o, :, i] (k = 0..n-1 in order) and
// calls store(o * inner + i, acc). Rows are handed out in tiles of adjacent i so
// that the strided walk reads whole cache lines.
template <class Acc, class T, class Store>
void reduce_rows(const T* x, const DimSplit& s, const Store& store) {
  using C = compute_t<T>;
  if (s.outer * s.inner == 0) return;
  if (s.inner == 1) {  // contiguous rows
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, s.n));
    parallel_for(s.outer, grain, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) store(o, fold_contiguous<Acc>(x + o * s.n, s.n, 0));
    });
    return;
  }
  const int64_t tile = std::min(s.inner, kColumnTile);
  const int64_t tiles_per_outer = (s.inner + tile - 1) / tile;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, s.n * tile));
  parallel_for(s.outer * tiles_per_outer, grain, [&](int64_t w0, int64_t w1) {
    Acc acc[kColumnTile];
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t o = w / tiles_per_outer;
      const int64_t i0 = (w % tiles_per_outer) * tile;
      const int64_t width = std::min(tile, s.inner - i0);
      std::fill(acc, acc + width, Acc());
      const T* base = x + o * s.n * s.inner + i0;
      for (int64_t k = 0; k < s.n; ++k) {
        const T* row = base + k * s.inner;
        for (int64_t j = 0; j < width; ++j) acc[j].add(C(row[j]), k);
      }
      for (int64_t j = 0; j < width; ++j) store(o * s.inner + i0 + j, acc[j]);
    }
  });
}

// The sum of an integer x into the i64 y, over everything or along dim (the entry point
// allows only sums of integers).
void integer_sum(const Tensor& x, const DimSplit* along, const Tensor& y) {
  int64_t* out = y.data<int64_t>();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      if (along == nullptr) out[0] = reduce_flat<IntSumAcc>(x.data<T>(), x.numel()).sum;
      else reduce_rows<IntSumAcc>(x.data<T>(), *along, [&](int64_t i, const IntSumAcc& a) { out[i] = a.sum; });
    }
  });
}

}  // namespace

void reduce_all(ReduceOp op, const Tensor& x, const Tensor& y) {
  if (!is_floating(x.dtype())) return integer_sum(x, nullptr, y);
  dispatch_floating("reduce_all", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    if (op == ReduceOp::max) {
      out[0] = T(reduce_flat<MaxAcc<C>>(in, x.numel()).value);
    } else {
      const double sum = reduce_flat<SumAcc>(in, x.numel()).sum;
      out[0] = T(C(op == ReduceOp::mean ? sum / static_cast<double>(x.numel()) : sum));  // empty mean: 0/0 = nan
    }
  });
}

void reduce_dim(ReduceOp op, const Tensor& x, int64_t dim, const Tensor& y) {
  const DimSplit s = split_at_dim(x.shape(), dim);
  if (!is_floating(x.dtype())) return integer_sum(x, &s, y);
  dispatch_floating("reduce_dim", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    T* out = y.data<T>();
    if (op == ReduceOp::max) {
      reduce_rows<MaxAcc<C>>(x.data<T>(), s, [&](int64_t i, const MaxAcc<C>& a) { out[i] = T(a.value); });
    } else {
      const double divisor = op == ReduceOp::mean ? static_cast<double>(s.n) : 1.0;  // empty mean: nan
      reduce_rows<SumAcc>(x.data<T>(), s, [&](int64_t i, const SumAcc& a) { out[i] = T(C(a.sum / divisor)); });
    }
  });
}

void argmax_all(const Tensor& x, const Tensor& y) {
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    y.data<int64_t>()[0] = reduce_flat<MaxAcc<compute_t<T>>>(x.data<T>(), x.numel()).index;
  });
}

void argmax_dim(const Tensor& x, int64_t dim, const Tensor& y) {
  int64_t* out = y.data<int64_t>();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    reduce_rows<MaxAcc<compute_t<T>>>(x.data<T>(), split_at_dim(x.shape(), dim),
                                      [&](int64_t i, const MaxAcc<compute_t<T>>& a) { out[i] = a.index; });
  });
}

void scatter_dim(const Tensor& dy, const Tensor& indices, int64_t dim, const Tensor& dx) {
  const DimSplit s = split_at_dim(dx.shape(), dim);  // dy has s.outer * s.inner elements (checked by the entry point)
  std::memset(dx.data_ptr(), 0, dx.nbytes());  // all-zero bits are 0 in every dtype
  const int64_t* idx = indices.data<int64_t>();  // each in [0, s.n): checked by the entry point
  dispatch_dtype(dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = dy.data<T>();
    T* dst = dx.data<T>();
    parallel_for(dy.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j) {
        const int64_t o = j / s.inner, i = j % s.inner;
        dst[(o * s.n + idx[j]) * s.inner + i] = src[j];
      }
    });
  });
}

}  // namespace ember::kernels::cpu
