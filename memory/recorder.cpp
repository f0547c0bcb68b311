#include "memory/recorder.h"

#include <algorithm>

#include "memory/memory.h"
#include "memory/scopes.h"

namespace ember {

namespace {
constexpr size_t kLargestAtPeak = 10;

std::string shape_text(const Shape* shape) { return shape == nullptr ? "" : shape->str(); }
}  // namespace

MemoryRecorder::MemoryRecorder(Device device) : device_(device) {}

MemoryRecorder::~MemoryRecorder() { stop(); }

void MemoryRecorder::start() {
  const MemoryStats stats = memory_stats(device_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int c = 0; c < kNumMemoryCategories; ++c)
      live_by_category_[static_cast<size_t>(c)] = stats.by_category[static_cast<size_t>(c)].current;
    start_time_ = std::chrono::steady_clock::now();
    recording_ = true;
    peak_ = Sample();
    peak_.allocated = stats.allocated_bytes.current;
    peak_.reserved = stats.reserved_bytes.current;
    peak_.by_category = live_by_category_;
  }
  set_allocation_observer(this);
}

void MemoryRecorder::stop() {
  if (allocation_observer() == this) set_allocation_observer(nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  recording_ = false;
}

void MemoryRecorder::set_step(int step) {
  std::lock_guard<std::mutex> lock(mutex_);
  step_ = step;
}

void MemoryRecorder::on_event(const AllocationEvent& event) noexcept {
  if (event.device != device_) return;
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!recording_) return;
    const auto c = static_cast<size_t>(event.category);
    const Phase phase = current_phase();
    if (event.allocate) {
      live_by_category_[c] += event.bytes;
      live_[event.ptr] = Allocation{event.op ? event.op : "", shape_text(event.shape), event.category, phase,
                                    event.bytes};
    } else {
      live_by_category_[c] -= event.bytes;
      live_.erase(event.ptr);
    }
    Sample s;
    s.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_time_).count();
    s.step = step_;
    s.phase = phase;
    s.allocate = event.allocate;
    s.address = reinterpret_cast<uintptr_t>(event.ptr);
    s.bytes = event.bytes;
    s.category = event.category;
    s.by_category = live_by_category_;
    s.allocated = event.allocated_after;
    s.reserved = event.reserved_after;
    samples_.push_back(s);
    if (s.allocated > peak_.allocated) {
      peak_ = s;
      snapshot_largest();
    }
  } catch (...) {
    // Recording is best effort: running out of host memory for the log must not break training.
  }
}

void MemoryRecorder::snapshot_largest() {
  std::vector<Allocation> all;
  all.reserve(live_.size());
  for (const auto& [ptr, a] : live_) all.push_back(a);
  const size_t n = std::min(kLargestAtPeak, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
                    [](const Allocation& a, const Allocation& b) { return a.bytes > b.bytes; });
  all.resize(n);
  largest_at_peak_ = std::move(all);
}

std::vector<MemoryRecorder::Sample> MemoryRecorder::samples() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_;
}

}  // namespace ember
