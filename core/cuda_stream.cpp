#include "core/cuda_stream.h"

#include <array>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include "core/cuda_runtime.h"
#include "core/error.h"

#ifdef EMBER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ember::cuda {
namespace {

#ifdef EMBER_HAVE_CUDA
void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear it so later calls do not report it again
  EMBER_THROW("cuda: " << what << " failed: " << cudaGetErrorString(status));
}
#endif

// Devices a thread keeps a current stream for; a larger index falls back to the default stream.
constexpr int kMaxDevices = 64;

// The calling thread's current stream per device index (nullptr: the legacy default stream).
std::array<StreamHandle, kMaxDevices>& current_streams() {
  thread_local std::array<StreamHandle, kMaxDevices> streams{};
  return streams;
}

int checked_index(const Device& device) {
  EMBER_CHECK(device.is_cuda() && device.index >= 0 && device.index < kMaxDevices,
              "cuda stream: " << device << " is not a CUDA device ember can hold streams for");
  return device.index;
}

}  // namespace

Stream Stream::default_stream(const Device& device) { return device.is_cuda() ? Stream(device, nullptr) : Stream(); }

Stream Stream::create(const Device& device) {
  const int index = checked_index(device);
  check_device(device, "cuda::Stream::create");
#ifdef EMBER_HAVE_CUDA
  struct Pool {
    std::once_flag made;
    std::array<StreamHandle, kPoolSize> streams{};
    std::atomic<int> next{0};
  };
  static std::array<Pool, kMaxDevices> pools;
  Pool& pool = pools[static_cast<size_t>(index)];
  std::call_once(pool.made, [&] {
    DeviceGuard guard(device);
    for (StreamHandle& s : pool.streams) {
      cudaStream_t stream = nullptr;
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      s = stream;
    }
  });
  return Stream(device, pool.streams[static_cast<size_t>(pool.next++ % kPoolSize)]);
#else
  (void)index;
  return Stream(device, nullptr);
#endif
}

void Stream::synchronize() const {
#ifdef EMBER_HAVE_CUDA
  if (!device_.is_cuda() || device_count() == 0) return;
  DeviceGuard guard(device_);
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)), "cudaStreamSynchronize");
#endif
}

bool Stream::query() const {
#ifdef EMBER_HAVE_CUDA
  if (!device_.is_cuda() || device_count() == 0) return true;
  DeviceGuard guard(device_);
  const cudaError_t status = cudaStreamQuery(static_cast<cudaStream_t>(handle_));
  if (status == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  check(status, "cudaStreamQuery");
#endif
  return true;
}

void Stream::wait(const Event& event) const {
#ifdef EMBER_HAVE_CUDA
  if (!device_.is_cuda() || !event.recorded()) return;
  DeviceGuard guard(device_);
  check(cudaStreamWaitEvent(static_cast<cudaStream_t>(handle_), static_cast<cudaEvent_t>(event.handle()), 0),
        "cudaStreamWaitEvent");
#else
  (void)event;
#endif
}

void Stream::wait(const Stream& other) const {
  if (other == *this || !other.device_.is_cuda()) return;
  Event mark;
  mark.record(other);
  wait(mark);  // the wait is enqueued now: destroying the event after it is allowed
}

Stream current_stream(const Device& device) {
  if (!device.is_cuda()) return Stream();
  const StreamHandle handle = current_streams()[static_cast<size_t>(checked_index(device))];
  return Stream(device, handle);
}

StreamHandle current_stream_handle() {
  const int index = current_device();
  return index >= 0 && index < kMaxDevices ? current_streams()[static_cast<size_t>(index)] : nullptr;
}

void record_stream(const Tensor& t, const Stream& stream) {
  if (!t.defined() || !t.is_cuda() || t.storage() == nullptr) return;
  EMBER_CHECK(stream.device() == t.device(),
              "record_stream: " << t.str() << " is on " << t.device() << ", the stream on " << stream.device());
  t.storage()->buffer.record_stream(stream.handle());
}

StreamGuard::StreamGuard(const Stream& stream) {
  if (!stream.device().is_cuda()) return;
  const int index = checked_index(stream.device());
  previous_ = current_stream(stream.device());
  previous_device_ = current_device();
#ifdef EMBER_HAVE_CUDA
  if (device_count() > 0 && previous_device_ != index) check(cudaSetDevice(index), "cudaSetDevice");
#endif
  current_streams()[static_cast<size_t>(index)] = stream.handle();
}

StreamGuard::~StreamGuard() {
  if (!previous_.device().is_cuda()) return;
  current_streams()[static_cast<size_t>(previous_.device().index)] = previous_.handle();
#ifdef EMBER_HAVE_CUDA
  if (previous_device_ >= 0 && previous_device_ != previous_.device().index) cudaSetDevice(previous_device_);  // never throws
#endif
}

Event::~Event() {
#ifdef EMBER_HAVE_CUDA
  if (handle_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
#endif
}

Event::Event(Event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)), device_(other.device_) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Event old(std::move(*this));
    handle_ = std::exchange(other.handle_, nullptr);
    device_ = other.device_;
  }
  return *this;
}

void Event::record(const Stream& stream) {
#ifdef EMBER_HAVE_CUDA
  if (!stream.device().is_cuda() || device_count() == 0) return;
  DeviceGuard guard(stream.device());
  if (handle_ == nullptr) {
    cudaEvent_t event = nullptr;
    check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    handle_ = event;
    device_ = stream.device();
  }
  EMBER_CHECK(device_ == stream.device(),
              "cuda::Event: made on " << device_ << ", cannot be recorded on a stream of " << stream.device());
  check(cudaEventRecord(static_cast<cudaEvent_t>(handle_), static_cast<cudaStream_t>(stream.handle())),
        "cudaEventRecord");
#else
  (void)stream;
#endif
}

void Event::synchronize() const {
#ifdef EMBER_HAVE_CUDA
  if (handle_ != nullptr) check(cudaEventSynchronize(static_cast<cudaEvent_t>(handle_)), "cudaEventSynchronize");
#endif
}

bool Event::query() const {
#ifdef EMBER_HAVE_CUDA
  if (handle_ == nullptr) return true;
  const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(handle_));
  if (status == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  check(status, "cudaEventQuery");
#endif
  return true;
}

}  // namespace ember::cuda
