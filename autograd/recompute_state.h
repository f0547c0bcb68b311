#pragma once
// Whether the current thread is re-running a forward for recompute-based
// checkpointing. Ops with side effects read it: BatchNorm updates its running
// statistics only on the first forward, never again when the segment is recomputed.
//
//   { ember::autograd::RecomputeScope recompute;  outputs = fn(inputs); }   // checkpoint's backward
//   if (!ember::autograd::is_recomputing()) update_running_stats();
namespace ember::autograd {

bool is_recomputing();  // false unless a RecomputeScope is alive on this thread

class RecomputeScope {
 public:
  RecomputeScope();
  ~RecomputeScope();
  RecomputeScope(const RecomputeScope&) = delete;
  RecomputeScope& operator=(const RecomputeScope&) = delete;

 private:
  bool previous_;
};

}  // namespace ember::autograd
