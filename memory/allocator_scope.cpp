#include "memory/allocator_scope.h"

namespace ember {
namespace {
thread_local const AllocatorScope* innermost = nullptr;
}  // namespace

AllocatorScope::AllocatorScope(Device device, DeviceAllocator& allocator)
    : device_(device), allocator_(&allocator), outer_(innermost) {
  innermost = this;
}

AllocatorScope::~AllocatorScope() { innermost = outer_; }

DeviceAllocator* scoped_allocator_for(Device device) {
  for (const AllocatorScope* scope = innermost; scope != nullptr; scope = scope->outer_)
    if (scope->device_ == device) return scope->allocator_;
  return nullptr;
}

}  // namespace ember
