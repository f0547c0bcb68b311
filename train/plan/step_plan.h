#pragma once
// Predicts the memory of a training step before any math runs: the workload
// (train/plan/workload.h) is built and stepped twice inside a SimulationScope
// (memory/simulation.h), the real model code on shape-only tensors through the same
// autograd graph and the same caching-allocator policy, and the second (steady-state)
// step's statistics are the prediction. No formula: what the code allocates is what is
// predicted. `ember plan` prints it; fit_memory_budget (train/plan/budget_fit.h) chooses with it.
//
//   ember::train::StepPrediction p = ember::train::plan_step(workload, /*threads=*/2);
//   p.peak_bytes;   // what the same step measures when it runs (ember bench-train)
//   p.peak_op;      // "conv2d_backward_input": the op allocating at the peak
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "memory/scopes.h"
#include "train/plan/workload.h"

namespace ember::train {

struct StepPrediction {
  int64_t peak_bytes = 0;           // allocated, the step's peak
  int64_t peak_reserved_bytes = 0;  // reserved by the caching allocator
  std::array<int64_t, kNumMemoryCategories> peak_by_category{};     // each category's own peak
  std::array<int64_t, kNumMemoryCategories> at_peak_by_category{};  // what was live at the peak
  std::string peak_op;              // the op whose allocation reached the peak
  Phase peak_phase = Phase::other;  // and the part of the step it ran in
  int64_t checkpoint_segments = 0;
  double simulate_ms = 0.0;         // how long the prediction took
  bool fits = true;                 // false: the step ran out of the capacity it was given
  std::string out_of_memory;        // and the allocator's message
};

// `threads`: the CPU thread count the step will run with (the CPU convolution's scratch is one
// column buffer per thread). `capacity` (bytes, 0: none) simulates a device of that size, with
// the caching allocator's real out-of-memory path (free the cache, retry): a step that would
// fail under that limit comes back with fits = false. The global generator is left as it was.
StepPrediction plan_step(const Workload& workload, int threads, size_t capacity = 0);

}  // namespace ember::train
