#include "memory/guard_bytes.h"

#include <sstream>

#include "memory/memory.h"

namespace ember {
namespace {
thread_local GuardBytesScope* active_scope = nullptr;

// The distance from the tensor's edge of the first byte of `bytes` that is not the guard byte,
// or -1. The front guard ends at the tensor, so it is read backwards (`front`).
long first_changed(const std::vector<unsigned char>& bytes, bool front) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    const size_t at = front ? bytes.size() - 1 - i : i;
    if (bytes[at] != GuardBytesScope::kGuardByte) return static_cast<long>(i);
  }
  return -1;
}
}  // namespace

GuardBytesScope::GuardBytesScope() : previous_(active_scope) { active_scope = this; }
GuardBytesScope::~GuardBytesScope() { active_scope = previous_; }
GuardBytesScope* GuardBytesScope::current() { return active_scope; }

std::shared_ptr<Storage> GuardBytesScope::allocate(size_t bytes, const AllocationRequest& request,
                                                   const Shape& shape, DType dtype) {
  AllocationRequest guarded = request;
  guarded.bytes = bytes + 2 * kGuardBytes;
  DeviceAllocator& allocator = allocator_for(request.device);
  auto storage = std::make_shared<Storage>();
  storage->buffer = allocator.allocate(guarded);
  auto* base = static_cast<unsigned char*>(storage->buffer.data());
  RawBackend& raw = allocator.backend();
  raw.fill_bytes(base, kGuardByte, kGuardBytes);
  raw.fill_bytes(base + kGuardBytes, 0xFF, bytes);
  raw.fill_bytes(base + kGuardBytes + bytes, kGuardByte, kGuardBytes);
  std::ostringstream what;
  what << "Tensor" << shape << " " << dtype_name(dtype) << " " << request.device.str() << " from '"
       << (request.op[0] != '\0' ? request.op : "(no op)") << "'";
  guarded_.push_back({storage, bytes, what.str()});
  return storage;
}

std::vector<std::string> GuardBytesScope::violations() const {
  std::vector<std::string> found;
  std::vector<unsigned char> front(kGuardBytes), back(kGuardBytes);
  for (const Guarded& g : guarded_) {
    auto* base = static_cast<const unsigned char*>(g.storage->buffer.data());
    RawBackend& raw = allocator_for(g.storage->buffer.device()).backend();
    raw.read_bytes(base, front.data(), kGuardBytes);
    raw.read_bytes(base + kGuardBytes + g.bytes, back.data(), kGuardBytes);
    const long before = first_changed(front, true), after = first_changed(back, false);
    if (before >= 0)
      found.push_back(g.what + ": written " + std::to_string(before + 1) + " byte(s) before its first byte");
    if (after >= 0)
      found.push_back(g.what + ": written " + std::to_string(after) + " byte(s) past its end (of " +
                      std::to_string(g.bytes) + ")");
  }
  return found;
}

}  // namespace ember
