#include "core/cuda_runtime.h"
#include "core/error.h"
#include "memory/raw_backend.h"

#ifdef EMBER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ember {

#ifdef EMBER_HAVE_CUDA
namespace {

// Each call makes the backend's device current and gives the caller's back after (the
// allocator runs on whichever thread asks: the loader's, the trainer's).
class CudaBackend final : public RawBackend {
 public:
  explicit CudaBackend(int index) : index_(index) {}

  void* malloc(size_t bytes) override {
    cuda::DeviceGuard device(Device(DeviceType::cuda, index_), std::nothrow);
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();  // an out-of-memory is not sticky; clear it
      return nullptr;
    }
    return p;
  }
  void free(void* ptr, size_t /*bytes*/) noexcept override {
    cuda::DeviceGuard device(Device(DeviceType::cuda, index_), std::nothrow);
    cudaFree(ptr);
  }
  size_t capacity() const override {
    size_t free_bytes = 0, total_bytes = 0;
    cuda::DeviceGuard device(Device(DeviceType::cuda, index_), std::nothrow);
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return 0;
    return total_bytes;
  }
  // The event is made on the backend's device, where the stream must be (cudaEventRecord
  // needs both on one device); the null stream is that device's default stream. Any of these
  // calls may also return an error left by an earlier asynchronous launch: every failure reads
  // as "not known", and cudaGetLastError clears the non-sticky ones.
  bool record_event(StreamHandle stream, Event& event) override {
    cuda::DeviceGuard device(Device(DeviceType::cuda, index_), std::nothrow);
    cudaEvent_t created = nullptr;
    if (cudaEventCreateWithFlags(&created, cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    if (cudaEventRecord(created, static_cast<cudaStream_t>(stream)) != cudaSuccess) {
      cudaGetLastError();
      cudaEventDestroy(created);
      return false;
    }
    event = created;
    return true;
  }
  bool event_done(Event event) override {
    if (event == nullptr) return true;
    const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (status == cudaSuccess) return true;
    cudaGetLastError();  // cudaErrorNotReady: still pending; anything else: unknown, so not done either
    return false;
  }
  bool synchronize_event(Event event) override {
    if (event == nullptr) return true;
    if (cudaEventSynchronize(static_cast<cudaEvent_t>(event)) == cudaSuccess) return true;
    cudaGetLastError();
    return false;
  }
  bool synchronize_stream(StreamHandle stream) override {
    cuda::DeviceGuard device(Device(DeviceType::cuda, index_), std::nothrow);
    if (cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) == cudaSuccess) return true;
    cudaGetLastError();
    return false;
  }
  void destroy_event(Event event) noexcept override {
    if (event != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event));
  }
  // Synchronous with every stream of the device (the legacy default stream does not wait for
  // ember's non-blocking ones): the guard bytes are set after any kernel still writing the
  // memory's previous tenant, and read after every kernel that wrote near them.
  void fill_bytes(void* ptr, unsigned char value, size_t bytes) override {
    cuda::DeviceGuard device(Device(DeviceType::cuda, index_));
    EMBER_CHECK(cudaDeviceSynchronize() == cudaSuccess && cudaMemset(ptr, value, bytes) == cudaSuccess &&
                    cudaDeviceSynchronize() == cudaSuccess,
                "cudaMemset of " << bytes << " guard bytes failed on cuda:" << index_);
  }
  void read_bytes(const void* ptr, void* host, size_t bytes) override {
    cuda::DeviceGuard device(Device(DeviceType::cuda, index_));
    EMBER_CHECK(cudaDeviceSynchronize() == cudaSuccess && cudaMemcpy(host, ptr, bytes, cudaMemcpyDeviceToHost) == cudaSuccess,
                "reading " << bytes << " guard bytes back from cuda:" << index_ << " failed");
  }
  Device device() const override { return Device(DeviceType::cuda, index_); }
  std::string name() const override { return "cudaMalloc"; }

 private:
  int index_;
};

}  // namespace

std::unique_ptr<RawBackend> make_cuda_backend(int device_index) {
  return std::make_unique<CudaBackend>(device_index);
}
#else
std::unique_ptr<RawBackend> make_cuda_backend(int /*device_index*/) {
  EMBER_THROW("CUDA memory requested but ember was built without CUDA");
}
#endif

}  // namespace ember
