#pragma once
// PinnedBuffer: page-locked host memory (cudaHostAlloc) from which a batch is
// copied to one GPU asynchronously, with an event that marks when the last copy
// out of it finished (so it can be refilled).
//
//   PinnedBuffer staging(bytes, kCUDA);             // copies go to cuda:0
//   staging.wait_copies();                          // before writing into it again
//   Tensor host = staging.view({64, 1, 28, 28}, DType::f32);   // CPU tensor over the pinned bytes
//   ... fill host ...
//   staging.copy_to_device_async(device_tensor, 0); // returns at once; queued on the stream device_tensor
//                                                   // was allocated for (its device's, whatever is current)
//
// Only used when the CUDA backend is compiled in; without it the constructor throws.
// The views do not own the memory: the buffer must outlive them.
#include <cstddef>

#include "core/tensor.h"

namespace ember::data {

class PinnedBuffer {
 public:
  PinnedBuffer(size_t bytes, Device device);
  ~PinnedBuffer();  // waits for pending copies, frees; never throws
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&&) = delete;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  // A CPU tensor over bytes [offset_bytes, offset_bytes + numel * dtype size) of the buffer.
  Tensor view(const Shape& shape, DType dtype, size_t offset_bytes = 0) const;
  // Starts copying dst.nbytes() bytes from offset_bytes into dst, a tensor on this buffer's
  // device, on the stream its memory was allocated for, then records this buffer's event there.
  void copy_to_device_async(const Tensor& dst, size_t offset_bytes);
  // Blocks until every copy started from this buffer has finished.
  void wait_copies();

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_;          // where the copies go; the event is made there
  void* event_ = nullptr;  // cudaEvent_t
};

}  // namespace ember::data
