// CUDA find_out_of_range: one grid-stride pass in which every out-of-range index
// offers its position to an atomicMin; the smallest position (and then its value)
// is copied back. Costs one stream sync, so the entry points that call it (labels,
// scatter_dim) throw on the host like the CPU does.
#include "kernels/cuda/device_utils.cuh"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember::kernels::cuda {

namespace {

// first[0] = the smallest i with indices[i] outside [0, limit) (stays all ones when none is).
__global__ void first_out_of_range_kernel(const int64_t* __restrict__ indices, int64_t n, int64_t limit,
                                          unsigned long long* __restrict__ first) {
  for (int64_t i = thread_index(); i < n; i += thread_count())
    if (indices[i] < 0 || indices[i] >= limit) atomicMin(first, static_cast<unsigned long long>(i));
}

// Copies `bytes` from the device to the host once the current stream reaches this point.
void copy_to_host(void* dst, const void* src, size_t bytes) {
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, current_stream()));
  EMBER_CUDA_CHECK(cudaStreamSynchronize(current_stream()));
}

}  // namespace

OutOfRange find_out_of_range(const Tensor& indices, int64_t limit) {
  const int64_t n = indices.numel();
  if (n == 0) return {};
  const Tensor flag = empty(Shape{}, TensorOptions().dtype(DType::i64).device(indices.device()));
  auto* first = reinterpret_cast<unsigned long long*>(device_data<int64_t>(flag));
  EMBER_CUDA_CHECK(cudaMemsetAsync(first, 0xff, sizeof(unsigned long long), current_stream()));  // "none"
  const int64_t* idx = device_data<int64_t>(indices);
  launch_1d("find_out_of_range", n, first_out_of_range_kernel, idx, n, limit, first);
  unsigned long long at = 0;
  copy_to_host(&at, first, sizeof at);
  if (at == ~0ULL) return {};
  OutOfRange r;
  r.position = static_cast<int64_t>(at);
  copy_to_host(&r.value, idx + at, sizeof r.value);
  return r;
}

}  // namespace ember::kernels::cuda
