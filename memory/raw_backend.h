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
  // Streams and events, for the caching allocator's cross-stream rule. Every call reports
  // failure instead of throwing (the allocator calls them from free, which must not throw).
  // The defaults are for synchronous backends (the host): their work is done when a call
  // returns, so an event is recorded as null and always complete, and nothing needs waiting.
  using Event = void*;
  // Records an event on `stream` after the work queued there so far. False when the event
  // cannot be created or recorded: then nothing is known about the stream (`event` is unset,
  // and nothing is left to destroy).
  virtual bool record_event(StreamHandle /*stream*/, Event& event) {
    event = nullptr;
    return true;
  }
  // True only when the event is known to be complete: an error answers false.
  virtual bool event_done(Event /*event*/) { return true; }
  // Blocks until the event completes, or until all work queued on the stream so far is done.
  // False when that cannot be known (an error).
  virtual bool synchronize_event(Event /*event*/) { return true; }
  virtual bool synchronize_stream(StreamHandle /*stream*/) { return true; }
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
