#pragma once
// Shared by every kernels/cuda/*.cu: error checks that throw ember::Error with
// the call and the CUDA error string, launch geometry, and the stream kernels use.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_stream.h"
#include "core/error.h"
#include "core/half.h"

#define EMBER_CUDA_CHECK(call)                                                          \
  do {                                                                                  \
    const cudaError_t ember_cuda_status_ = (call);                                      \
    EMBER_CHECK(ember_cuda_status_ == cudaSuccess,                                      \
                #call << " failed: " << cudaGetErrorString(ember_cuda_status_));        \
  } while (0)

// After a <<<launch>>>: reports bad launch configurations at the launch site.
#define EMBER_CUDA_CHECK_LAUNCH(name) \
  EMBER_CHECK(cudaPeekAtLastError() == cudaSuccess, name << ": kernel launch failed: " << cudaGetErrorString(cudaGetLastError()))

namespace ember::kernels::cuda {

inline constexpr int kThreadsPerBlock = 256;
inline constexpr int64_t kMaxBlocks = 65535LL * 32;  // grid-stride loops cover the rest

inline unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

// The stream every ember kernel, copy and library call runs on: the calling thread's current
// stream on the current device (core/cuda_stream.h; the legacy default stream unless a
// StreamGuard names another).
inline cudaStream_t current_stream() { return static_cast<cudaStream_t>(ember::cuda::current_stream_handle()); }

// Storage type -> CUDA type: ember::Half is bit-compatible with __half.
template <class T> struct DeviceType { using type = T; };
template <> struct DeviceType<Half> { using type = __half; };
template <class T> using device_t = typename DeviceType<T>::type;

// Loads and stores in the compute type (float for __half).
template <class T> __device__ __forceinline__ auto load(const T* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __half* p, int64_t i) { return __half2float(p[i]); }
template <class T, class V> __device__ __forceinline__ void store(T* p, int64_t i, V v) { p[i] = static_cast<T>(v); }
template <class V> __device__ __forceinline__ void store(__half* p, int64_t i, V v) { p[i] = __float2half(static_cast<float>(v)); }

}  // namespace ember::kernels::cuda
