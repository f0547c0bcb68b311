#include "core/simulation.h"

namespace ember {
namespace {
thread_local bool simulating_now = false;
}  // namespace

bool simulating() { return simulating_now; }
void set_simulating(bool on) { simulating_now = on; }

}  // namespace ember
