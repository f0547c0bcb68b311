#include <cstdlib>
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

std::unique_ptr<RawBackend> make_host_backend(size_t capacity_bytes) {
  return std::make_unique<HostBackend>(capacity_bytes);
}

size_t parse_byte_size(const std::string& text, const char* what) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KiB" || unit == "k") scale = 1024.0;
  else if (unit == "M" || unit == "MiB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
  else if (unit == "KB") scale = 1e3;
  else if (unit == "MB") scale = 1e6;
  else if (unit == "GB") scale = 1e9;
  EMBER_CHECK(end != text.c_str() && scale > 0 && value >= 0,
              what << ": cannot read '" << text << "' as a size (examples: 512MiB, 2GiB, 1000000)");
  return static_cast<size_t>(value * scale);
}

}  // namespace ember
