#include "memory/scopes.h"

namespace ember {

namespace {
thread_local MemoryCategory tls_category = MemoryCategory::temporary;
thread_local Phase tls_phase = Phase::other;
thread_local const char* tls_op = "";
}  // namespace

MemoryCategory current_category() { return tls_category; }
CategoryScope::CategoryScope(MemoryCategory category) : previous_(tls_category) { tls_category = category; }
CategoryScope::~CategoryScope() { tls_category = previous_; }

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::other: return "other";
    case Phase::data: return "data";
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::optimizer: return "optimizer";
  }
  return "?";
}

Phase current_phase() { return tls_phase; }
PhaseScope::PhaseScope(Phase phase) : previous_(tls_phase) { tls_phase = phase; }
PhaseScope::~PhaseScope() { tls_phase = previous_; }

OpNameScope::OpNameScope(const char* op) : previous_(tls_op) { tls_op = op; }
OpNameScope::~OpNameScope() { tls_op = previous_; }
const char* OpNameScope::current() { return tls_op; }

}  // namespace ember
