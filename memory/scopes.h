#pragma once
// The three per-thread labels every allocation carries, each set by an RAII scope:
//
//   { ember::CategoryScope scope(ember::MemoryCategory::parameter);   // what the bytes are for
//     ember::PhaseScope phase(ember::Phase::forward);                  // where in the step
//     ember::OpNameScope op("conv2d");                                 // which op asked
//     weight = ember::randn({out, in}); }
//
// Scopes nest; the innermost wins. Without a scope, bytes are "temporary", the phase
// "other" and the op unnamed. The allocators read them (memory/empty.cpp); the recorder,
// the statistics and the out-of-memory message report them.
#include <cstdint>

#include "core/allocator.h"

namespace ember {

MemoryCategory current_category();

class CategoryScope {
 public:
  explicit CategoryScope(MemoryCategory category);
  ~CategoryScope();
  CategoryScope(const CategoryScope&) = delete;
  CategoryScope& operator=(const CategoryScope&) = delete;

 private:
  MemoryCategory previous_;
};

// The training phase, set by the training loop, Module::forward, the autograd engine and
// the optimizer.
enum class Phase : uint8_t { other, data, forward, backward, optimizer };
inline constexpr int kNumPhases = 5;
const char* phase_name(Phase phase);
Phase current_phase();

class PhaseScope {
 public:
  explicit PhaseScope(Phase phase);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  Phase previous_;
};

// Names the op for the allocations made while it runs (recorder, OOM messages).
class OpNameScope {
 public:
  explicit OpNameScope(const char* op);
  ~OpNameScope();
  OpNameScope(const OpNameScope&) = delete;
  OpNameScope& operator=(const OpNameScope&) = delete;
  static const char* current();

 private:
  const char* previous_;
};

}  // namespace ember
