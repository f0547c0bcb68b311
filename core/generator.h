#pragma once
// The global random generator: a seed and a counter offset. A random op reserves
// the counters it will use, then CPU or CUDA code computes philox(seed, offset + k).
//
//   ember::manual_seed(42);   // same numbers on CPU and CUDA afterwards
#include <cstdint>

namespace ember {

struct GeneratorState {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

void manual_seed(uint64_t seed);
GeneratorState generator_state();
void set_generator_state(const GeneratorState& state);  // checkpointing restores it
// Returns the state to use for a draw of `counters` Philox counters and advances the offset.
GeneratorState reserve_random(uint64_t counters);

// Puts the generator back, at the end of the scope, where it was at its start (also when an
// exception leaves the scope): checkpointing's recompute and its memory probe draw nothing
// that the real step would see.
//
//   { ember::RestoreGeneratorState restore;  ember::set_generator_state(saved);  recompute(); }
class RestoreGeneratorState {
 public:
  RestoreGeneratorState() : state_(generator_state()) {}
  ~RestoreGeneratorState() { set_generator_state(state_); }
  RestoreGeneratorState(const RestoreGeneratorState&) = delete;
  RestoreGeneratorState& operator=(const RestoreGeneratorState&) = delete;

 private:
  GeneratorState state_;
};

}  // namespace ember
