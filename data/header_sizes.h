#pragma once
// Sizes read from a file header, checked before anything is allocated from them:
//
//   uint64_t bytes = 0;
//   if (!checked_byte_count(dims, /*unit=*/1, kMaxIdxDataBytes, &bytes)) ...  // no tensor may have these sizes
//
// A Shape multiplies its sizes in int64 (numel() all of them, strides() the nonzero ones), so
// a 0 size, which makes the byte count 0, must not excuse the others: the product of the
// nonzero sizes is bounded too.
#include <cstdint>
#include <vector>

namespace ember::data {

// *bytes = unit * product(sizes). False (and *bytes unspecified) when a size is negative or
// unit * the product of the nonzero sizes exceeds max_bytes (at most INT64_MAX).
bool checked_byte_count(const std::vector<int64_t>& sizes, uint64_t unit, uint64_t max_bytes, uint64_t* bytes);

}  // namespace ember::data
