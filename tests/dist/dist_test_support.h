#pragma once
// Helpers for the dist/ tests, which run in one process and as every rank of `mpiexec -n 2`
// and `-n 3` (tests/dist/CMakeLists.txt). A case runs on every rank: each rank fills its tensors
// from its rank, calls the same collectives, and checks the values every rank can compute. The
// values are small whole numbers, so every sum is exact in f32, f64 and i64 and the checks are
// equalities. The tests link ember_dist alone (no autograd/), so values are read with data<T>().
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "dist/world.h"
#include "kernels/factories.h"

namespace ember::dist::test {

// A CPU tensor of `dtype` holding `values` (whole numbers, exact in every dtype used).
inline Tensor tensor_of(const std::vector<double>& values, DType dtype) {
  return from_vector<double>(values, Shape{static_cast<int64_t>(values.size())}, TensorOptions().dtype(dtype));
}

// A CPU tensor's elements, as doubles (f32, f64, i64, f16 and u8).
inline std::vector<double> values_of(const Tensor& t) {
  std::vector<double> out;
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) out.push_back(static_cast<double>(p[i]));  // Half: via float
  });
  return out;
}

// Elements [index * length, (index + 1) * length) of a 1-D tensor, sharing its storage (the kind
// of view narrow() makes; autograd/ is not linked here).
inline Tensor chunk_of(const Tensor& flat, int index, int64_t length) {
  return Tensor(flat.storage(), flat.impl()->offset_bytes + static_cast<size_t>(index * length) * flat.element_size(),
                Shape{length}, flat.dtype(), flat.device());
}

// The dtypes every reduction takes.
inline const std::vector<DType> kReducible = {DType::f32, DType::f64, DType::i64};

}  // namespace ember::dist::test
