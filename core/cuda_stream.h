#pragma once
// Streams and events: the queues CUDA work runs on, and the marks that order one queue after
// another. Every ember kernel, copy and cuBLAS/cuDNN call is queued on the calling thread's
// current stream of its device (kernels/cuda/cuda_check.cuh's current_stream()), and a CUDA
// tensor's bytes are allocated for that stream (the caching allocator reuses a block only on the
// stream it was allocated for, memory/caching_allocator.cpp). The current stream is the device's
// legacy default stream until a StreamGuard names another:
//
//   cuda::Stream side = cuda::Stream::create(kCUDA);   // one of ember's non-blocking streams
//   Tensor y;
//   {
//     cuda::StreamGuard guard(side);                  // this thread's cuda:0 work goes to `side`
//     y = relu(x);                                    // x must be ready there: wait for it first
//   }
//   cuda::Event done;
//   done.record(side);
//   cuda::current_stream(kCUDA).wait(done);           // later work on cuda:0's current stream waits for relu
//   cuda::record_stream(y, cuda::current_stream(kCUDA));  // y's bytes are not reused before that work is done
//
// The data loader copies each batch on a stream of its own this way (data/data_loader.h), so the
// copy of the next batch overlaps the kernels of the step before it.
//
// Without CUDA or a GPU every stream is the null handle and every call returns at once, so code
// written for streams runs unchanged on the CPU.
#include "core/allocator.h"
#include "core/device.h"
#include "core/tensor.h"

namespace ember::cuda {

class Event;
class Stream;
// The calling thread's current stream on `device` (a CUDA device; Stream() for a CPU one).
Stream current_stream(const Device& device);

// A stream handle: the device and its cudaStream_t (nullptr: the legacy default stream). Copying
// is cheap; the streams themselves live as long as the process (see create()).
class Stream {
 public:
  Stream() = default;  // the default stream of no device (a CPU tensor's)
  static Stream default_stream(const Device& device);
  // One of `device`'s ember streams, created with cudaStreamNonBlocking (no implicit wait for the
  // legacy default stream: order them with events). They come from a pool of kPoolSize per device,
  // handed out in turn and never destroyed (at exit the CUDA context may be gone before static
  // destructors run), so creating many loaders creates no more streams than that.
  static Stream create(const Device& device);
  static constexpr int kPoolSize = 4;

  StreamHandle handle() const { return handle_; }
  Device device() const { return device_; }
  bool is_default() const { return handle_ == nullptr; }
  // Blocks until everything queued on the stream so far is done.
  void synchronize() const;
  // True when everything queued so far is done.
  bool query() const;
  // Work queued on this stream from now on starts after `event` completes (no host wait).
  void wait(const Event& event) const;
  // ... after everything queued on `other` so far.
  void wait(const Stream& other) const;

  bool operator==(const Stream& o) const { return device_ == o.device_ && handle_ == o.handle_; }
  bool operator!=(const Stream& o) const { return !(*this == o); }

 private:
  friend Stream current_stream(const Device& device);
  Stream(Device device, StreamHandle handle) : device_(device), handle_(handle) {}
  Device device_;
  StreamHandle handle_ = nullptr;
};

// The calling thread's current stream on the current CUDA device: what kernels launch on.
StreamHandle current_stream_handle();

// Makes `stream` the calling thread's current stream on its device for the scope, and its device
// the current device (as core/cuda_runtime.h's DeviceGuard does); restores both after.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
  int previous_device_ = -1;  // -1: nothing to restore
};

// Marks t's bytes as used on `stream` too: freed, they are reused only after the work queued there
// until then is done (Buffer::record_stream). For a tensor made on one stream and read on another.
void record_stream(const Tensor& t, const Stream& stream);

// A CUDA event (timing disabled), owned: move-only, destroyed with the object. Made on the device of
// the first stream it is recorded on; recording on another device's stream is refused.
class Event {
 public:
  Event() = default;
  ~Event();  // never throws
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Marks the point after the work queued on `stream` so far.
  void record(const Stream& stream);
  // Blocks until the work before the last record is done (at once if never recorded).
  void synchronize() const;
  bool query() const;
  bool recorded() const { return handle_ != nullptr; }
  void* handle() const { return handle_; }  // cudaEvent_t

 private:
  void* handle_ = nullptr;
  Device device_;
};

}  // namespace ember::cuda
