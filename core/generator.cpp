#include "core/generator.h"

#include <mutex>

namespace ember {
namespace {
std::mutex generator_mutex;
GeneratorState global_state{0x853c49e6748fea9bull, 0};
}  // namespace

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(generator_mutex);
  global_state = GeneratorState{seed, 0};
}

GeneratorState generator_state() {
  std::lock_guard<std::mutex> lock(generator_mutex);
  return global_state;
}

void set_generator_state(const GeneratorState& state) {
  std::lock_guard<std::mutex> lock(generator_mutex);
  global_state = state;
}

GeneratorState reserve_random(uint64_t counters) {
  std::lock_guard<std::mutex> lock(generator_mutex);
  GeneratorState draw = global_state;
  global_state.offset += counters;
  return draw;
}

}  // namespace ember
