#include "autograd/recompute_state.h"

namespace ember::autograd {

namespace {
thread_local bool tls_recomputing = false;
}

bool is_recomputing() { return tls_recomputing; }

RecomputeScope::RecomputeScope() : previous_(tls_recomputing) { tls_recomputing = true; }
RecomputeScope::~RecomputeScope() { tls_recomputing = previous_; }

}  // namespace ember::autograd
