#include "memory/direct_allocator.h"

#include "memory/allocation_checks.h"
#include "memory/allocation_observer.h"
#include "memory/out_of_memory.h"

namespace ember {

DirectAllocator::DirectAllocator(std::unique_ptr<RawBackend> backend) : backend_(std::move(backend)) {}

Buffer DirectAllocator::allocate(const AllocationRequest& request) {
  check_allocation_request(request);
  void* p = backend_->malloc(request.bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  if (p == nullptr) {
    ++stats_.ooms;
    throw OutOfMemoryError(out_of_memory_message(request, backend_->capacity(), stats_, 0), request.bytes);
  }
  // Every block is its own segment.
  const auto bytes = static_cast<int64_t>(request.bytes);
  stats_.add_segment(bytes, pool_of(request.bytes));
  stats_.add_block(bytes, bytes, request.category, pool_of(request.bytes));
  notify_allocation_observer(true, p, bytes, request.category, &request, request.device, stats_);
  return Buffer(p, request.bytes, request, this);
}

void DirectAllocator::release(void* data, size_t bytes, Device device, MemoryCategory category,
                              StreamHandle /*stream*/) noexcept {
  backend_->free(data, bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto n = static_cast<int64_t>(bytes);
  stats_.remove_block(n, n, category, pool_of(bytes));
  stats_.remove_active(n);
  stats_.remove_segment(n, pool_of(bytes));
  notify_allocation_observer(false, data, n, category, nullptr, device, stats_);
}

void DirectAllocator::relabel(Buffer& buffer, MemoryCategory category) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto n = static_cast<int64_t>(buffer.bytes());
  notify_allocation_observer(false, buffer.data(), n, buffer.category(), nullptr, buffer.device(), stats_);
  stats_.move_category(n, buffer.category(), category);
  notify_allocation_observer(true, buffer.data(), n, category, nullptr, buffer.device(), stats_);
  set_buffer_category(buffer, category);
}

MemoryStats DirectAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void DirectAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_peaks();
}

}  // namespace ember
