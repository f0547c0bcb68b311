#pragma once
// empty(): the one place a tensor's bytes are allocated. The bytes come from
// allocator_for(device) and carry the current CategoryScope's category.
#include "core/tensor.h"

namespace ember {

Tensor empty(const Shape& shape, TensorOptions options = {});
Tensor empty_like(const Tensor& t);
// Names the op for the allocations made while it runs (recorder, OOM messages).
class OpNameScope {
 public:
  explicit OpNameScope(const char* op);
  ~OpNameScope();
  OpNameScope(const OpNameScope&) = delete;
  OpNameScope& operator=(const OpNameScope&) = delete;
  static const char* current();

 private:
  const char* previous_;
};

}  // namespace ember
