#include "data/pinned_buffer.h"

#include <memory>

#include "core/cuda_runtime.h"
#include "core/error.h"

#ifdef EMBER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ember::data {

#ifdef EMBER_HAVE_CUDA
namespace {

void check_cuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear it so later calls do not report it again
  EMBER_THROW("PinnedBuffer: " << what << " failed: " << cudaGetErrorString(status));
}

}  // namespace

PinnedBuffer::PinnedBuffer(size_t bytes, Device device) : bytes_(bytes), device_(device) {
  EMBER_CHECK(device.is_cuda(), "PinnedBuffer: copies go to a CUDA device, not " << device);
  // The event must be made on the device whose streams record it (cudaEventRecord refuses another's).
  cuda::DeviceGuard guard(device);
  // One byte at least: cudaHostAlloc of 0 bytes returns no pointer to view.
  check_cuda(cudaHostAlloc(&data_, bytes > 0 ? bytes : 1, cudaHostAllocPortable), "cudaHostAlloc");
  cudaEvent_t event = nullptr;
  const cudaError_t status = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (status != cudaSuccess) cudaFreeHost(data_);
  check_cuda(status, "cudaEventCreate");
  event_ = event;
}

PinnedBuffer::~PinnedBuffer() {
  if (event_ != nullptr) {
    cudaEventSynchronize(static_cast<cudaEvent_t>(event_));  // a copy may still read the bytes
    cudaEventDestroy(static_cast<cudaEvent_t>(event_));
  }
  if (data_ != nullptr) cudaFreeHost(data_);
}

void PinnedBuffer::copy_to_device_async(const Tensor& dst, size_t offset_bytes) {
  EMBER_CHECK(dst.device() == device_,
              "PinnedBuffer: copy destination " << dst.str() << " is not on this buffer's device " << device_);
  EMBER_CHECK(offset_bytes + dst.nbytes() <= bytes_, "PinnedBuffer: copying " << dst.nbytes() << " bytes from offset "
                                                                              << offset_bytes << " overruns the "
                                                                              << bytes_ << "-byte buffer");
  if (dst.nbytes() == 0) return;
  cuda::DeviceGuard guard(device_);
  const auto stream = static_cast<cudaStream_t>(dst.storage()->buffer.stream());
  check_cuda(cudaMemcpyAsync(dst.data_ptr(), static_cast<char*>(data_) + offset_bytes, dst.nbytes(),
                             cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync (host to device)");
  check_cuda(cudaEventRecord(static_cast<cudaEvent_t>(event_), stream), "cudaEventRecord");
}

void PinnedBuffer::wait_copies() {
  // An event never recorded counts as complete, so the first fill does not wait.
  if (event_ == nullptr) return;
  check_cuda(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)), "cudaEventSynchronize");
}

#else

PinnedBuffer::PinnedBuffer(size_t bytes, Device device) : bytes_(bytes), device_(device) {
  EMBER_THROW("PinnedBuffer: pinned host memory needs the CUDA backend (configure with -DEMBER_CUDA=ON)");
}
PinnedBuffer::~PinnedBuffer() = default;
void PinnedBuffer::copy_to_device_async(const Tensor& dst, size_t) {
  EMBER_THROW("PinnedBuffer: cannot copy to " << dst.str() << ": ember was built without CUDA");
}
void PinnedBuffer::wait_copies() {}

#endif

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(other.data_), bytes_(other.bytes_), device_(other.device_), event_(other.event_) {
  other.data_ = nullptr;
  other.event_ = nullptr;
  other.bytes_ = 0;
}

Tensor PinnedBuffer::view(const Shape& shape, DType dtype, size_t offset_bytes) const {
  const size_t bytes = static_cast<size_t>(shape.numel()) * dtype_size(dtype);
  EMBER_CHECK(offset_bytes + bytes <= bytes_, "PinnedBuffer: a view of " << bytes << " bytes at offset "
                                                                         << offset_bytes << " overruns the " << bytes_
                                                                         << "-byte buffer");
  AllocationRequest request;
  request.bytes = bytes;
  request.device = kCPU;
  request.category = MemoryCategory::data;
  auto storage = std::make_shared<Storage>();
  // No owner: the Buffer does not free the bytes; the PinnedBuffer does.
  storage->buffer = Buffer(static_cast<char*>(data_) + offset_bytes, bytes, request, nullptr);
  return Tensor(std::move(storage), 0, shape, dtype, kCPU);
}

}  // namespace ember::data
