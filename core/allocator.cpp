#include "core/allocator.h"

#include <utility>

namespace ember {

const char* category_name(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::parameter: return "parameter";
    case MemoryCategory::gradient: return "gradient";
    case MemoryCategory::optimizer_state: return "optimizer_state";
    case MemoryCategory::master_weights: return "master_weights";
    case MemoryCategory::activation: return "activation";
    case MemoryCategory::temporary: return "temporary";
    case MemoryCategory::workspace: return "workspace";
    case MemoryCategory::data: return "data";
  }
  return "?";
}

Buffer::~Buffer() {
  if (owner_ != nullptr) owner_->release(data_, bytes_, device_, category_, stream_);
}

void Buffer::record_stream(StreamHandle stream) const {
  if (owner_ != nullptr && stream != stream_) owner_->record_stream(*this, stream);
}

void Buffer::swap(Buffer& o) noexcept {
  std::swap(data_, o.data_);
  std::swap(bytes_, o.bytes_);
  std::swap(device_, o.device_);
  std::swap(category_, o.category_);
  std::swap(stream_, o.stream_);
  std::swap(owner_, o.owner_);
}

}  // namespace ember
