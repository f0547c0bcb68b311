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
      os << "activations dominate a training step: gradient checkpointing, recompute instead of store "
            "(checkpoint = sqrt), fp16 activations with fp32 master weights (precision = fp16), or a "
            "smaller micro-batch with gradient accumulation, same effective batch (accum = 4)";
      break;
    case MemoryCategory::parameter:
    case MemoryCategory::gradient:
    case MemoryCategory::optimizer_state:
    case MemoryCategory::master_weights:
      os << "the model's own state does not fit: a smaller model, or a lighter optimizer (SGD keeps one "
            "buffer per parameter, Adam two); a smaller batch does not shrink these, and fp16 "
            "(precision = fp16) adds fp32 master weights to them";
      break;
    default:
      os << "a smaller micro-batch with gradient accumulation (accum = 4), gradient checkpointing "
            "(checkpoint = sqrt), or fp16 (precision = fp16)";
  }
  if (unused > 0) os << "; empty_cache() returns " << format_bytes(unused) << " of cached memory";
  os << ".";
  return os.str();
}

}  // namespace ember
