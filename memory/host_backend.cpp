#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/error.h"
#include "memory/raw_backend.h"

namespace ember {
namespace {

constexpr size_t kHostAlignmentBytes = 64;  // a cache line; enough for AVX-512 loads

class HostBackend final : public RawBackend {
 public:
  explicit HostBackend(size_t capacity) : capacity_(capacity) {}

  void* malloc(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (capacity_ != 0 && in_use_ + bytes > capacity_) return nullptr;
    const size_t rounded = (bytes + kHostAlignmentBytes - 1) / kHostAlignmentBytes * kHostAlignmentBytes;
    void* p = std::aligned_alloc(kHostAlignmentBytes, rounded == 0 ? kHostAlignmentBytes : rounded);
    if (p != nullptr) in_use_ += bytes;
    return p;
  }
  void free(void* ptr, size_t bytes) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::free(ptr);
    in_use_ -= bytes;
  }
  size_t capacity() const override { return capacity_; }
  void set_capacity(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = bytes;
  }
  Device device() const override { return kCPU; }
  std::string name() const override { return "host"; }

 private:
  std::mutex mutex_;
  size_t capacity_;
  size_t in_use_ = 0;
};

}  // namespace

void RawBackend::set_capacity(size_t /*bytes*/) {
  EMBER_THROW(name() << " memory has a fixed capacity; only the host backend's limit can be changed");
}

void RawBackend::fill_bytes(void* ptr, unsigned char value, size_t bytes) { std::memset(ptr, value, bytes); }
void RawBackend::read_bytes(const void* ptr, void* host, size_t bytes) { std::memcpy(host, ptr, bytes); }

std::unique_ptr<RawBackend> make_host_backend(size_t capacity_bytes) {
  return std::make_unique<HostBackend>(capacity_bytes);
}

}  // namespace ember
