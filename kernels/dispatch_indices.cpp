// The index check find_out_of_range, and the label and index range checks the entry points share.
#include <string>
#include <vector>

#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"

namespace ember::kernels {

namespace {

// "[1, 0]": the coordinates of flat position `at` in `shape`.
std::string coordinates(const Shape& shape, int64_t at) {
  std::vector<int64_t> coords(static_cast<size_t>(shape.dim()));
  for (int64_t d = shape.dim() - 1; d >= 0; --d) {
    coords[static_cast<size_t>(d)] = shape[d] > 0 ? at % shape[d] : 0;
    at = shape[d] > 0 ? at / shape[d] : 0;
  }
  std::string text = "[";
  for (size_t d = 0; d < coords.size(); ++d) text += (d ? ", " : "") + std::to_string(coords[d]);
  return text + "]";
}

}  // namespace

OutOfRange find_out_of_range(const Tensor& indices, int64_t limit) {
  check_defined(indices, "find_out_of_range", "indices");
  check_dtype(indices, DType::i64, "find_out_of_range", "indices");
  return EMBER_BACKEND(indices.device(), find_out_of_range, indices, limit);
}

void check_label_range(const Tensor& labels, int64_t classes, const char* op) {
  const OutOfRange bad = EMBER_BACKEND(labels.device(), find_out_of_range, labels, classes);
  if (bad.found()) throw_bad_label(op, bad.position, bad.value, classes);
}

void check_index_range(const Tensor& indices, int64_t limit, const char* op, const std::string& range_of) {
  const OutOfRange bad = EMBER_BACKEND(indices.device(), find_out_of_range, indices, limit);
  if (!bad.found()) return;
  EMBER_THROW(op << ": index " << bad.value << " at " << coordinates(indices.shape(), bad.position) << " of indices "
                 << indices.shape() << " is out of range " << range_of << " (expected 0 <= index < " << limit
                 << ")");
}

}  // namespace ember::kernels
