#pragma once
// Walking a broadcast: strides that read an input of shape `in` while iterating an output of
// shape `out` (in broadcasts to out; dims that broadcast get stride 0), and the output's
// elements [begin, end) as runs along its innermost dims (as many as every operand walks as one),
// each operand's offset carried from run to run by an odometer (one division pass at `begin`,
// none per element):
//
//   const BroadcastRuns<2> runs(c.shape(), {broadcast_strides(a.shape(), c.shape()),
//                                           broadcast_strides(b.shape(), c.shape())});
//   with_steps_for<T>(runs, [&](auto sa, auto sb) {   // 1: a row of the operand, 0: one value
//     runs.each(begin, end, [&](int64_t i, int64_t len, const std::array<int64_t, 2>& at) {
//       for (int64_t j = 0; j < len; ++j) pc[i + j] = pa[at[0] + j * sa] + pb[at[1] + j * sb];
//     });
//   });
#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/shape.h"

namespace ember::kernels::cpu {

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

template <size_t K>
class BroadcastRuns {
 public:
  // strides[k]: operand k's broadcast_strides for `out`. Dims of size 1 never move an offset and
  // are dropped; an out of one element (0-d included) walks as one.
  BroadcastRuns(const Shape& out, const std::array<std::vector<int64_t>, K>& strides) {
    for (int64_t d = 0; d < out.dim(); ++d) {
      if (out[d] == 1) continue;
      sizes_.push_back(out[d]);
      for (size_t k = 0; k < K; ++k) strides_[k].push_back(strides[k][static_cast<size_t>(d)]);
    }
    if (sizes_.empty()) {
      sizes_ = {1};
      for (auto& s : strides_) s = {0};
    }
    coalesce();
  }

  // Operand k's step along a run: 1 where it has the innermost dim of out that is not 1, 0
  // where it broadcasts along it (the operands are contiguous).
  int64_t step(size_t k) const { return strides_[k].back(); }

  // fn(i, len, at): output elements [i, i + len) lie in one run; operand k's
  // element for output i is at offset at[k], and moves by step(k) along the run.
  template <class Fn>
  void each(int64_t begin, int64_t end, const Fn& fn) const {
    if (begin >= end) return;
    const size_t dims = sizes_.size(), last = dims - 1;
    std::vector<int64_t> index(dims);
    std::array<int64_t, K> at{};
    for (size_t d = dims, rest = static_cast<size_t>(begin); d-- > 0;) {  // begin's index, once
      index[d] = static_cast<int64_t>(rest % static_cast<size_t>(sizes_[d]));
      rest /= static_cast<size_t>(sizes_[d]);
      for (size_t k = 0; k < K; ++k) at[k] += index[d] * strides_[k][d];
    }
    for (int64_t i = begin;;) {
      const int64_t len = std::min(sizes_[last] - index[last], end - i);
      fn(i, len, at);
      i += len;
      if (i >= end) return;
      for (size_t k = 0; k < K; ++k) at[k] -= index[last] * strides_[k][last];  // the row's start
      index[last] = 0;
      for (size_t d = last; d-- > 0;) {  // the next row: carry through the outer dims
        for (size_t k = 0; k < K; ++k) at[k] += strides_[k][d];
        if (++index[d] < sizes_[d]) break;
        for (size_t k = 0; k < K; ++k) at[k] -= index[d] * strides_[k][d];
        index[d] = 0;
      }
    }
  }

 private:
  // Merges each dim into the next where every operand walks the two as one (its stride over the
  // outer dim is the inner's stride times the inner's size: both contiguous, or both broadcast),
  // so a run spans as much as the operands allow: a same-shape walk is one run, [N, C, H, W] with
  // [C, 1, 1] runs of H * W. The order of the elements is the same.
  void coalesce() {
    std::vector<int64_t> sizes{sizes_.back()};
    std::array<std::vector<int64_t>, K> strides;
    for (size_t k = 0; k < K; ++k) strides[k] = {strides_[k].back()};
    for (size_t d = sizes_.size() - 1; d-- > 0;) {
      bool merges = true;
      for (size_t k = 0; k < K; ++k) merges = merges && strides_[k][d] == strides[k].front() * sizes.front();
      if (merges) {
        sizes.front() *= sizes_[d];
        continue;
      }
      sizes.insert(sizes.begin(), sizes_[d]);
      for (size_t k = 0; k < K; ++k) strides[k].insert(strides[k].begin(), strides_[k][d]);
    }
    sizes_ = std::move(sizes);
    strides_ = std::move(strides);
  }

  std::vector<int64_t> sizes_;
  std::array<std::vector<int64_t>, K> strides_;
};

// Calls fn with each operand's step as a compile-time 0 or 1 (std::integral_constant), so that
// a run's loop reads rows and repeated values the compiler can vectorise. Where an output has a
// dim that is not 1, some operand has it (a broadcast's size is its operands' largest), so the
// steps are never all 0 and that combination is not compiled.
template <size_t K, class Fn, class... Steps>
void with_unit_steps(const BroadcastRuns<K>& runs, const Fn& fn, Steps... steps) {
  constexpr size_t k = sizeof...(Steps);
  if constexpr (k == K) {
    fn(steps...);
  } else if constexpr (K > 1 && k == K - 1 && (... && (Steps::value == 0))) {
    with_unit_steps(runs, fn, steps..., std::integral_constant<int64_t, 1>{});
  } else {
    if (runs.step(k) == 0) with_unit_steps(runs, fn, steps..., std::integral_constant<int64_t, 0>{});
    else with_unit_steps(runs, fn, steps..., std::integral_constant<int64_t, 1>{});
  }
}

// with_unit_steps for f32, the dtype models train in; other dtypes get the steps as values: the
// same walk in one loop, not one per combination (their compile time doubled otherwise).
template <size_t K, class Fn, size_t... I>
void with_runtime_steps(const BroadcastRuns<K>& runs, const Fn& fn, std::index_sequence<I...>) {
  fn(runs.step(I)...);
}

template <class T, size_t K, class Fn>
void with_steps_for(const BroadcastRuns<K>& runs, const Fn& fn) {
  if constexpr (std::is_same_v<T, float>) with_unit_steps(runs, fn);
  else with_runtime_steps(runs, fn, std::make_index_sequence<K>{});
}

}  // namespace ember::kernels::cpu
