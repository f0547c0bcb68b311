#pragma once
// MemoryRecorder: records every allocation and free on one device with its time,
// training step, phase, category, op and shape, and keeps the ten largest live
// allocations at the peak. Export with memory/report.h.
//
//   MemoryRecorder recorder(kCPU);
//   recorder.start();
//   for (int step = 0; step < 3; ++step) { recorder.set_step(step); train_step(); }
//   recorder.stop();
//   write_memory_report_html("mem.html", recorder, "ConvNet, batch 64");
#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "memory/allocation_observer.h"
#include "memory/scopes.h"

namespace ember {

class MemoryRecorder final : public AllocationObserver {
 public:
  struct Sample {
    double time_ms = 0;
    int step = 0;
    Phase phase = Phase::other;
    bool allocate = true;
    uintptr_t address = 0;  // pairs a free with its allocation (replays, e.g. bench/memory)
    int64_t bytes = 0;
    MemoryCategory category = MemoryCategory::temporary;
    std::array<int64_t, kNumMemoryCategories> by_category{};  // live bytes after the event
    int64_t allocated = 0;                                    // the allocator's totals after the event
    int64_t reserved = 0;
  };
  struct Allocation {
    std::string op;
    std::string shape;
    MemoryCategory category = MemoryCategory::temporary;
    Phase phase = Phase::other;
    int64_t bytes = 0;
  };

  explicit MemoryRecorder(Device device);
  ~MemoryRecorder() override;
  MemoryRecorder(const MemoryRecorder&) = delete;
  MemoryRecorder& operator=(const MemoryRecorder&) = delete;

  void start();  // becomes the allocation observer; live bytes start from the allocator's current stats
  void stop();
  void set_step(int step);
  void on_event(const AllocationEvent& event) noexcept override;

  Device device() const { return device_; }
  std::vector<Sample> samples() const;
  const Sample& peak() const { return peak_; }  // the sample with the most allocated bytes
  std::vector<Allocation> largest_at_peak() const { return largest_at_peak_; }  // ten, largest first

 private:
  void snapshot_largest();

  Device device_;
  mutable std::mutex mutex_;
  std::chrono::steady_clock::time_point start_time_;
  int step_ = 0;
  bool recording_ = false;
  std::array<int64_t, kNumMemoryCategories> live_by_category_{};
  std::unordered_map<const void*, Allocation> live_;
  std::vector<Sample> samples_;
  Sample peak_;
  std::vector<Allocation> largest_at_peak_;
};

}  // namespace ember
