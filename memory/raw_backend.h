#pragma once
// Raw backends: where segments of memory really come from. Allocators are pure
// policy over one of these, so tests can inject a fake with a fixed capacity.
#include <cstddef>
#include <memory>
#include <string>

#include "core/allocator.h"
#include "core/device.h"

namespace ember {

class RawBackend {
 public:
  virtual ~RawBackend() = default;
  // Returns nullptr when the memory is not available (never throws for that).
  virtual void* malloc(size_t bytes) = 0;
  virtual void free(void* ptr, size_t bytes) noexcept = 0;
  // 0 means "no limit we know of".
  virtual size_t capacity() const = 0;
  // Changes the limit (host backend); others throw.
  virtual void set_capacity(size_t bytes);
  // Stream events, for the caching allocator's cross-stream rule. Synchronous
  // backends (the host) have no streams: an event is always complete.
  using Event = void*;
  virtual Event record_event(StreamHandle /*stream*/) { return nullptr; }
  virtual bool event_done(Event /*event*/) { return true; }
  virtual void destroy_event(Event /*event*/) noexcept {}
  virtual Device device() const = 0;
  virtual std::string name() const = 0;
  // Byte access for memory/guard_bytes.h (a debugging aid, never on the hot path): sets
  // `bytes` bytes at ptr to `value`, and copies `bytes` bytes at ptr to host memory.
  // The defaults are for host-addressable memory.
  virtual void fill_bytes(void* ptr, unsigned char value, size_t bytes);
  virtual void read_bytes(const void* ptr, void* host, size_t bytes);
};

// Aligned host memory (64-byte alignment) with an optional capacity in bytes.
std::unique_ptr<RawBackend> make_host_backend(size_t capacity_bytes);
// cudaMalloc / cudaFree on one device.
std::unique_ptr<RawBackend> make_cuda_backend(int device_index);

}  // namespace ember
