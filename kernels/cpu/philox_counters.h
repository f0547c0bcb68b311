#pragma once
// Walking a range of elements whose random bits come from shared Philox counters (element i uses
// counter offset + i / per_counter), computing each counter once:
//
//   parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
//     for_each_counter(state, 4, begin, end, [&](int64_t i, const PhiloxOutput& r) { p[i] = r.v[i % 4]; });
//   });
//
// uniform_ (4 elements a counter), normal_ (2) and dropout (4) walk their elements this way.
#include <algorithm>
#include <cstdint>

#include "core/generator.h"
#include "core/philox.h"

namespace ember::kernels::cpu {

// Calls fn(i, r) for i in [begin, end), r the Philox output of element i's counter. A range that
// starts or ends inside a counter's elements computes that counter for its own part.
template <class Fn>
void for_each_counter(GeneratorState state, int64_t per_counter, int64_t begin, int64_t end, Fn fn) {
  for (int64_t i = begin; i < end;) {
    const int64_t counter = i / per_counter;
    const PhiloxOutput r = philox4x32(state.seed, state.offset + static_cast<uint64_t>(counter));
    const int64_t stop = std::min(end, (counter + 1) * per_counter);
    for (; i < stop; ++i) fn(i, r);
  }
}

}  // namespace ember::kernels::cpu
