#include "memory/allocation_checks.h"

#include "core/error.h"

namespace ember {

void check_allocation_request(const AllocationRequest& request) {
  EMBER_CHECK(request.bytes > 0, "allocate: a zero-byte request on " << request.device << " for "
                                                                     << category_name(request.category)
                                                                     << " (empty tensors own no memory)");
  EMBER_CHECK(request.bytes <= kMaxRequestBytes,
              "allocate: a request of " << request.bytes << " bytes on " << request.device
                                        << " is above the 2^48-byte (256 TiB) limit; the size is probably corrupt");
}

}  // namespace ember
