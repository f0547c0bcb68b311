// CPU find_out_of_range: the first index outside [0, limit), in flat order. Chunks
// scan in parallel; each keeps its own first hit and the smallest wins, so the
// answer does not depend on the thread count.
#include <atomic>
#include <limits>

#include "kernels/cpu/parallel.h"
#include "kernels/ops.h"

namespace ember::kernels::cpu {

OutOfRange find_out_of_range(const Tensor& indices, int64_t limit) {
  const int64_t* idx = indices.data<int64_t>();
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::atomic<int64_t> first{kNone};
  parallel_for(indices.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (idx[i] >= 0 && idx[i] < limit) continue;
      int64_t seen = first.load();
      while (i < seen && !first.compare_exchange_weak(seen, i)) {
      }
      return;  // later elements of this chunk cannot be first
    }
  });
  const int64_t at = first.load();
  if (at == kNone) return {};
  return OutOfRange{at, idx[at]};
}

}  // namespace ember::kernels::cpu
