#include "memory/out_of_memory.h"

#include <sstream>

namespace ember {

std::string out_of_memory_message(const AllocationRequest& request, size_t capacity_bytes,
                                  const MemoryStats& stats, size_t largest_free_block) {
  std::ostringstream os;
  const int64_t unused = stats.reserved_bytes.current - stats.allocated_bytes.current;
  os << "out of memory on " << request.device << ": tried to allocate "
     << format_bytes(static_cast<int64_t>(request.bytes)) << " for "
     << category_name(request.category);
  if (request.op != nullptr && request.op[0] != '\0') os << " (op " << request.op << ")";
  os << "; capacity " << (capacity_bytes ? format_bytes(static_cast<int64_t>(capacity_bytes)) : "unlimited")
     << ", allocated " << format_bytes(stats.allocated_bytes.current) << ", reserved but unused "
     << format_bytes(unused) << ", largest free block " << format_bytes(static_cast<int64_t>(largest_free_block))
     << ".\nWhat would help: ";
  switch (request.category) {
    case MemoryCategory::activation:
      os << "activations dominate a training step: gradient checkpointing (recompute instead of store), "
            "fp16 activations (mixed precision), or a smaller micro-batch with gradient accumulation";
      break;
    case MemoryCategory::parameter:
    case MemoryCategory::gradient:
    case MemoryCategory::optimizer_state:
      os << "the model's own state does not fit: fp16 parameters and gradients (mixed precision) or a "
            "smaller model; a smaller batch does not shrink these";
      break;
    default:
      os << "a smaller micro-batch with gradient accumulation, gradient checkpointing, or fp16 (mixed precision)";
  }
  if (unused > 0) os << "; empty_cache() returns " << format_bytes(unused) << " of cached memory";
  os << ".";
  return os.str();
}

}  // namespace ember
