#include "data/header_sizes.h"

#include <algorithm>

namespace ember::data {

bool checked_byte_count(const std::vector<int64_t>& sizes, uint64_t unit, uint64_t max_bytes, uint64_t* bytes) {
  max_bytes = std::min<uint64_t>(max_bytes, INT64_MAX);
  if (unit == 0 || unit > max_bytes) return false;
  uint64_t nonzero = unit;  // stays <= max_bytes, so the checks below cannot overflow
  bool empty = false;
  for (int64_t s : sizes) {
    if (s < 0) return false;
    if (s == 0) {
      empty = true;
      continue;
    }
    if (static_cast<uint64_t>(s) > max_bytes / nonzero) return false;
    nonzero *= static_cast<uint64_t>(s);
  }
  *bytes = empty ? 0 : nonzero;
  return true;
}

}  // namespace ember::data
