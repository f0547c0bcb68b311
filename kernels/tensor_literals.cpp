// ember::tensor({...}) and from_blob (kernels/factories.h): tensors from values the caller
// writes or owns.
#include <vector>

#include "core/error.h"
#include "kernels/factories.h"

namespace ember {

namespace {

template <class T, class V>
Tensor from_list(std::initializer_list<V> values, TensorOptions options) {
  const std::vector<T> flat(values.begin(), values.end());
  return from_vector<T>(flat, Shape{static_cast<int64_t>(flat.size())}, options);
}

template <class T>
Tensor from_rows(const std::vector<std::vector<T>>& rows, TensorOptions options) {
  const int64_t width = rows.empty() ? 0 : static_cast<int64_t>(rows.front().size());
  std::vector<T> flat;
  int64_t index = 0;
  for (const auto& row : rows) {
    EMBER_CHECK(static_cast<int64_t>(row.size()) == width, "tensor: rows must have the same length, but row 0 has "
                                                               << width << " values and row " << index << " has "
                                                               << row.size());
    flat.insert(flat.end(), row.begin(), row.end());
    ++index;
  }
  return from_vector<T>(flat, Shape{static_cast<int64_t>(rows.size()), width}, options);
}

}  // namespace

Tensor tensor(FloatList values) { return from_list<double>(values, TensorOptions(kFloat)); }
Tensor tensor(IntList values) { return from_list<int64_t>(values, TensorOptions(kLong)); }
Tensor tensor(LongList values) { return from_list<int64_t>(values, TensorOptions(kLong)); }
Tensor tensor(FloatList values, TensorOptions options) { return from_list<double>(values, options); }
Tensor tensor(IntList values, TensorOptions options) { return from_list<int64_t>(values, options); }
Tensor detail::tensor_rows(const std::vector<std::vector<double>>& rows, TensorOptions options) {
  return from_rows(rows, options);
}
Tensor detail::tensor_rows(const std::vector<std::vector<int64_t>>& rows, TensorOptions options) {
  return from_rows(rows, options);
}

Tensor from_blob(void* data, const Shape& shape, TensorOptions options) {
  EMBER_CHECK(data != nullptr || shape.numel() == 0, "from_blob: data is null for shape " << shape);
  AllocationRequest request;
  request.bytes = static_cast<size_t>(shape.numel()) * dtype_size(options.dtype_);
  request.device = options.device_;
  request.category = MemoryCategory::data;
  auto storage = std::make_shared<Storage>();
  storage->buffer = Buffer(data, request.bytes, request, /*owner=*/nullptr);  // no owner: never freed
  Tensor t(std::move(storage), 0, shape, options.dtype_, options.device_);
  if (options.requires_grad_) t.requires_grad_();
  return t;
}

}  // namespace ember
