#include "memory/empty.h"

#include "core/error.h"
#include "memory/memory.h"

namespace ember {
namespace {
thread_local const char* tls_op = "";
}

OpNameScope::OpNameScope(const char* op) : previous_(tls_op) { tls_op = op; }
OpNameScope::~OpNameScope() { tls_op = previous_; }
const char* OpNameScope::current() { return tls_op; }

Tensor empty(const Shape& shape, TensorOptions options) {
  for (int64_t s : shape.sizes())
    EMBER_CHECK(s >= 0, "empty: negative size in shape " << shape);
  AllocationRequest request;
  request.bytes = static_cast<size_t>(shape.numel()) * dtype_size(options.dtype_);
  request.device = options.device_;
  request.category = current_category();
  request.op = tls_op;
  request.shape = &shape;
  auto storage = std::make_shared<Storage>();
  if (request.bytes > 0) storage->buffer = allocator_for(options.device_).allocate(request);
  Tensor t(std::move(storage), 0, shape, options.dtype_, options.device_);
  if (options.requires_grad_) t.requires_grad_(true);
  return t;
}

Tensor empty_like(const Tensor& t) {
  return empty(t.shape(), TensorOptions().dtype(t.dtype()).device(t.device()));
}

}  // namespace ember
