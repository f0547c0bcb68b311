#include "memory/empty.h"

#include "core/cuda_stream.h"
#include "core/error.h"
#include "memory/guard_bytes.h"
#include "memory/memory.h"
#include "memory/scopes.h"

namespace ember {

Tensor empty(const Shape& shape, TensorOptions options) {
  for (int64_t s : shape.sizes())
    EMBER_CHECK(s >= 0, "empty: negative size in shape " << shape);
  AllocationRequest request;
  request.bytes = static_cast<size_t>(shape.numel()) * dtype_size(options.dtype_);
  request.device = options.device_;
  request.category = current_category();
  request.stream = cuda::current_stream(options.device_).handle();  // the stream the bytes are first used on
  request.op = OpNameScope::current();
  request.shape = &shape;
  std::shared_ptr<Storage> storage;
  size_t offset_bytes = 0;
  if (GuardBytesScope* guard = GuardBytesScope::current(); guard != nullptr && request.bytes > 0) {
    storage = guard->allocate(request.bytes, request, shape, options.dtype_);
    offset_bytes = GuardBytesScope::kGuardBytes;
  } else {
    storage = std::make_shared<Storage>();
    if (request.bytes > 0) storage->buffer = allocator_for(options.device_).allocate(request);
  }
  Tensor t(std::move(storage), offset_bytes, shape, options.dtype_, options.device_);
  if (options.requires_grad_) t.requires_grad_(true);
  return t;
}

Tensor empty_like(const Tensor& t) {
  return empty(t.shape(), TensorOptions().dtype(t.dtype()).device(t.device()));
}

}  // namespace ember
