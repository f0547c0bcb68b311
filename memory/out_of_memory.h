#pragma once
// OutOfMemoryError: thrown when a request cannot be served even after freeing
// cached memory. The message states the request, the capacity, what is allocated,
// what is reserved but unused, the largest free block, and what would help.
// The allocator stays consistent: the caller can catch it and carry on.
#include <cstddef>
#include <string>

#include "core/error.h"
#include "memory/stats.h"

namespace ember {

class OutOfMemoryError : public Error {
 public:
  OutOfMemoryError(const std::string& message, size_t requested_bytes)
      : Error(message), requested_bytes_(requested_bytes) {}
  size_t requested_bytes() const { return requested_bytes_; }

 private:
  size_t requested_bytes_;
};

// Builds the message from the allocator's statistics.
std::string out_of_memory_message(const AllocationRequest& request, size_t capacity_bytes,
                                  const MemoryStats& stats, size_t largest_free_block);

}  // namespace ember
