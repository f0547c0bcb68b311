// CUDA dtype casts and copies. copy_ owns every copy that touches a GPU:
//   same dtype: one cudaMemcpyAsync on the GPU side's current stream, waited for
//   (host<->device, device<->device);
//   different dtypes: the bytes move in the source dtype and the GPU converts
//   (host->device: copy, then cast on the device; device->host: cast on the
//   device, then copy), so no conversion ever runs on the host here.
// Conversions match kernels/cpu/elementwise.cpp: through float for f16, a plain
// static_cast otherwise (float -> int truncates toward zero).
#include "core/cuda_runtime.h"
#include "kernels/cuda/converted.cuh"
#include "kernels/cuda/device_utils.cuh"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember::kernels::cuda {

namespace {

template <class From, class To>
__global__ void cast_kernel(const From* in, To* out, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) store(out, i, load(in, i));
}

// dst = src converted, both on the same GPU.
void cast_on_device(const Tensor& dst, const Tensor& src) {
  if (src.numel() == 0) return;
  if (dst.dtype() == src.dtype()) {
    EMBER_CUDA_CHECK(
        cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), src.nbytes(), cudaMemcpyDeviceToDevice, current_stream()));
    return;
  }
  dispatch_dtype(src.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    dispatch_dtype(dst.dtype(), [&](auto to_tag) {
      using To = decltype(to_tag);
      launch_1d("cast", src.numel(), cast_kernel<device_t<From>, device_t<To>>, device_data<From>(src),
                device_data<To>(dst), src.numel());
    });
  });
}

// Same dtype, any pair of devices (at least one a GPU). Synchronous for the host: queued on the
// current stream of the GPU side (the source's for device to device, after the destination
// device's current stream is done with what it queued, since dst was allocated for it), then
// waited for, so a copy sees every kernel queued before it on either side.
void copy_bytes(const Tensor& dst, const Tensor& src) {
  if (src.nbytes() == 0) return;
  const cudaMemcpyKind kind = !src.is_cuda() ? cudaMemcpyHostToDevice
                              : dst.is_cuda() ? cudaMemcpyDeviceToDevice
                                              : cudaMemcpyDeviceToHost;
  if (src.is_cuda() && dst.is_cuda() && src.device() != dst.device()) ember::cuda::current_stream(dst.device()).synchronize();
  const Device gpu = src.is_cuda() ? src.device() : dst.device();
  ember::cuda::DeviceGuard guard(gpu);
  const cudaStream_t stream = current_stream();
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), src.nbytes(), kind, stream));
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

void cast(const Tensor& x, const Tensor& y) { cast_on_device(y, x); }

Tensor converted(const Tensor& t, DType dtype) {
  if (!t.defined() || t.dtype() == dtype) return t;
  Tensor y = empty(t.shape(), TensorOptions(dtype).device(t.device()));
  if (y.numel() > 0) cast_on_device(y, t);
  return y;
}

void copy_(const Tensor& dst, const Tensor& src) {
  if (dst.dtype() == src.dtype()) {
    copy_bytes(dst, src);
  } else if (src.device() == dst.device()) {
    cast_on_device(dst, src);
  } else if (dst.is_cuda()) {
    // Move the source bytes next to dst, then convert there.
    Tensor staged = empty(src.shape(), TensorOptions().dtype(src.dtype()).device(dst.device()));
    copy_bytes(staged, src);
    cast_on_device(dst, staged);
  } else {
    // dst is on the host: convert on the source GPU, then move the converted bytes.
    Tensor converted = empty(src.shape(), TensorOptions().dtype(dst.dtype()).device(src.device()));
    cast_on_device(converted, src);
    copy_bytes(dst, converted);
  }
}

}  // namespace ember::kernels::cuda
