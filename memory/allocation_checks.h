#pragma once
// Checks every allocator applies to a request before its policy runs.
#include "core/allocator.h"

namespace ember {

inline constexpr size_t kMaxRequestBytes = size_t{1} << 48;  // 256 TiB: above this a size is corrupt

// Throws ember::Error for a zero-byte request or one above kMaxRequestBytes.
void check_allocation_request(const AllocationRequest& request);

}  // namespace ember
