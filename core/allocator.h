#pragma once
// The allocation contract between tensors and memory/.
//
//   Buffer b = allocator.allocate(request);   // move-only; frees itself
//   void* p = b.data();
//
// core/ only knows this interface; memory/ implements it (direct and caching
// allocators, stats, categories). A Buffer carries its own release so core/
// never depends on memory/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/device.h"
#include "core/shape.h"

namespace ember {

// What a byte is for. Set by RAII scopes (memory/scopes.h) in modules,
// the autograd engine, the optimizer and the data loader.
enum class MemoryCategory : uint8_t {
  parameter,
  gradient,
  optimizer_state,
  master_weights,  // fp32 copies of fp16 parameters (train/mixed_precision_optimizer.h), and ZeRO's fp32 shards
  activation,  // outputs of forward ops, saved for backward
  temporary,   // everything short-lived: backward intermediates, casts, scratch
  workspace,   // library scratch (cuDNN, cuBLAS)
  data,        // input batches
};
inline constexpr int kNumMemoryCategories = 8;
const char* category_name(MemoryCategory category);

using StreamHandle = void*;  // cudaStream_t on CUDA; nullptr is the default stream

struct AllocationRequest {
  size_t bytes = 0;
  Device device;
  MemoryCategory category = MemoryCategory::temporary;
  StreamHandle stream = nullptr;
  const char* op = "";  // the op that asked, for the recorder and error messages
  const Shape* shape = nullptr;  // the tensor's shape when a tensor asked (valid during the call)
};

class Allocator;

// Move-only owner of one allocation. Copying is deleted to prevent accidental
// double frees and hidden copies; share a Buffer through Storage.
class Buffer {
 public:
  Buffer() = default;
  Buffer(void* data, size_t bytes, const AllocationRequest& request, Allocator* owner)
      : data_(data), bytes_(bytes), device_(request.device), category_(request.category),
        stream_(request.stream), owner_(owner) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer(std::move(o)).swap(*this);
    return *this;
  }
  ~Buffer();

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  MemoryCategory category() const { return category_; }
  StreamHandle stream() const { return stream_; }
  // Marks the bytes as used on `stream` as well as the one they were allocated for: once freed,
  // they are reused only after the work queued on `stream` until then is done (Allocator::record_stream).
  void record_stream(StreamHandle stream) const;

 private:
  friend class Allocator;
  void swap(Buffer& o) noexcept;

  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_;
  MemoryCategory category_ = MemoryCategory::temporary;
  StreamHandle stream_ = nullptr;
  Allocator* owner_ = nullptr;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Throws OutOfMemoryError (memory/) when the request cannot be served.
  virtual Buffer allocate(const AllocationRequest& request) = 0;
  // Returns cached-but-unused memory to the backend (no-op without a cache).
  virtual void empty_cache() {}
  // Marks `buffer` as used on `stream` too: when it is freed, its memory is
  // reused only after the work queued on that stream so far is done.
  virtual void record_stream(const Buffer& /*buffer*/, StreamHandle /*stream*/) {}
  // Moves a live buffer's bytes to another category (the autograd engine adopts a
  // temporary as a parameter's .grad instead of copying it).
  virtual void relabel(Buffer& buffer, MemoryCategory category) { set_buffer_category(buffer, category); }
  virtual std::string name() const = 0;

 protected:
  friend class Buffer;
  // Called by ~Buffer; must not throw.
  virtual void release(void* data, size_t bytes, Device device, MemoryCategory category,
                       StreamHandle stream) noexcept = 0;
  static void set_buffer_category(Buffer& buffer, MemoryCategory category) { buffer.category_ = category; }
};

}  // namespace ember
