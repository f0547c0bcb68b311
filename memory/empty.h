#pragma once
// empty(): the one place a tensor's bytes are allocated. The bytes come from
// allocator_for(device) and carry the current CategoryScope's category.
#include "core/tensor.h"

namespace ember {

Tensor empty(const Shape& shape, TensorOptions options = {});
Tensor empty_like(const Tensor& t);
}  // namespace ember
