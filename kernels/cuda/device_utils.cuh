#pragma once
// Helpers the elementwise-style CUDA kernels share: typed device pointers, the
// grid-stride loop, a checked 1-D launcher, and StridedIndex, which maps a flat
// output index to an input offset (broadcasting, sum_to) with sizes and strides
// passed by value:
//
//   const StridedIndex ia = broadcast_index(a.shape(), out_shape, "add");
//   launch_1d("add", n, my_kernel<D, C>, device_data<T>(a), ia, ...);
//   // in the kernel: for (int64_t i = thread_index(); i < n; i += thread_count()) ... a[ia.offset(i)]
#include <cstdint>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cuda/cuda_check.cuh"

namespace ember::kernels::cuda {

// The tensor's bytes as the CUDA element type (ember::Half -> __half).
template <class T>
device_t<T>* device_data(const Tensor& t) {
  return reinterpret_cast<device_t<T>*>(t.data<T>());
}

__device__ __forceinline__ int64_t thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t thread_count() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Launches kernel over n elements (grid-stride loops inside) and checks the launch.
// Nothing is launched for n == 0, so empty tensors never touch their (null) data.
template <class... Params, class... Args>
void launch_1d(const char* name, int64_t n, void (*kernel)(Params...), Args&&... args) {
  if (n <= 0) return;
  kernel<<<blocks_for(n), kThreadsPerBlock, 0, current_stream()>>>(std::forward<Args>(args)...);
  EMBER_CUDA_CHECK_LAUNCH(name);
}

inline constexpr int kMaxDims = static_cast<int>(kMaxBroadcastDims);  // core/shape.h

// offset(i) = sum over dims of (coordinate d of flat index i in `sizes`) * strides[d].
// `identity` short-cuts the common case where the input is laid out like the output.
struct StridedIndex {
  int dims = 0;
  bool identity = true;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};

  __device__ __forceinline__ int64_t offset(int64_t linear) const {
    if (identity) return linear;
    int64_t result = 0;
    for (int d = dims - 1; d >= 0; --d) {
      const int64_t size = sizes[d];
      result += (linear % size) * strides[d];
      linear /= size;
    }
    return result;
  }
};

// From explicit sizes and strides (same length, at most kMaxDims); throws naming op.
inline StridedIndex strided_index(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                                  const char* op) {
  EMBER_CHECK(sizes.size() <= static_cast<size_t>(kMaxDims),
              op << ": the CUDA backend supports at most " << kMaxDims << " dims, got " << sizes.size());
  StridedIndex index;
  index.identity = false;
  index.dims = static_cast<int>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    // A 0 size means nothing is iterated; 1 keeps the modulo well defined.
    index.sizes[d] = sizes[d] > 0 ? sizes[d] : 1;
    index.strides[d] = strides[d];
  }
  return index;
}

// Walks an input of shape `in` while iterating an output of shape `out` (in broadcasts to out).
inline StridedIndex broadcast_index(const Shape& in, const Shape& out, const char* op) {
  if (in == out) return StridedIndex{};
  return strided_index(out.sizes(), cpu::broadcast_strides(in, out), op);
}

}  // namespace ember::kernels::cuda
