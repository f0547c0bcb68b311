#include "train/plan/step_plan.h"

#include <omp.h>

#include <chrono>

#include "core/generator.h"
#include "memory/allocation_observer.h"
#include "memory/out_of_memory.h"
#include "memory/simulation.h"
#include "memory/stats.h"

namespace ember::train {

namespace {

// Follows the allocated bytes by category and keeps a snapshot at the highest point.
class PeakWatcher final : public AllocationObserver {
 public:
  explicit PeakWatcher(Device device) : device_(device) {}

  void on_event(const AllocationEvent& e) noexcept override {
    install_.forward(e);
    if (e.device != device_) return;
    live_[static_cast<size_t>(e.category)] += e.allocate ? e.bytes : -e.bytes;
    if (e.allocate && e.allocated_after > peak_) {
      peak_ = e.allocated_after;
      at_peak_ = live_;
      op_ = e.op != nullptr ? e.op : "";
      phase_ = current_phase();
    }
  }
  // Starts a new peak from what is live now.
  void reset(int64_t allocated_now) {
    peak_ = allocated_now;
    at_peak_ = live_;
    op_.clear();
    phase_ = Phase::other;
  }

  std::array<int64_t, kNumMemoryCategories> at_peak_{};
  std::string op_;
  Phase phase_ = Phase::other;

 private:
  Device device_;
  std::array<int64_t, kNumMemoryCategories> live_{};
  int64_t peak_ = 0;
  ObserverInstall install_{this};  // last: installed once the rest is built
};

}  // namespace

StepPrediction plan_step(const Workload& w, int threads, size_t capacity) {
  const auto t0 = std::chrono::steady_clock::now();
  RestoreGeneratorState restore;  // the simulation seeds the generator; the caller's run must not see it
  const int previous_threads = omp_get_max_threads();
  omp_set_num_threads(threads);
  StepPrediction p;
  {
    SimulationScope simulation(w.device, capacity);
    PeakWatcher watcher(w.device);
    BuiltWorkload workload;
    try {
      workload = build_workload(w);
      workload.step(0);  // the first step also creates the optimizer's state
      simulation.allocator().reset_peak_stats();
      watcher.reset(simulation.stats().allocated_bytes.current);
      workload.step(1);
    } catch (const OutOfMemoryError& e) {
      p.fits = false;
      p.out_of_memory = e.what();
    }
    const MemoryStats stats = simulation.stats();
    p.peak_bytes = stats.allocated_bytes.peak;
    p.peak_reserved_bytes = stats.reserved_bytes.peak;
    for (size_t c = 0; c < p.peak_by_category.size(); ++c) p.peak_by_category[c] = stats.by_category[c].peak;
    p.at_peak_by_category = watcher.at_peak_;
    p.peak_op = watcher.op_;
    p.peak_phase = watcher.phase_;
    p.checkpoint_segments = workload.trainer ? workload.trainer->checkpoint_segments() : 0;
  }
  omp_set_num_threads(previous_threads);
  p.simulate_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

}  // namespace ember::train
