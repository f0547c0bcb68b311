#pragma once
// A raw backend with a fixed capacity that hands out fake, never-dereferenced
// addresses, and stream events the test completes by hand. It lets the caching
// allocator's policy be tested on the CPU, byte for byte.
#include <cstdint>
#include <map>

#include "memory/raw_backend.h"

namespace ember::test {

class FakeBackend final : public RawBackend {
 public:
  explicit FakeBackend(size_t capacity) : capacity_(capacity) {}

  void* malloc(size_t bytes) override {
    if (in_use_ + bytes > capacity_) return nullptr;
    void* p = reinterpret_cast<void*>(next_address_);
    next_address_ += bytes + kGuardBytes;  // a gap, so segments are never adjacent
    live_[p] = bytes;
    in_use_ += bytes;
    ++mallocs_;
    return p;
  }
  void free(void* ptr, size_t bytes) noexcept override {
    auto it = live_.find(ptr);
    if (it == live_.end() || it->second != bytes) ++bad_frees_;
    if (it != live_.end()) {
      in_use_ -= it->second;
      live_.erase(it);
    }
    ++frees_;
  }
  size_t capacity() const override { return capacity_; }
  void set_capacity(size_t bytes) override { capacity_ = bytes; }
  Device device() const override { return kCPU; }
  std::string name() const override { return "fake"; }

  Event record_event(StreamHandle /*stream*/) override {
    pending_events_ += 1;
    return reinterpret_cast<Event>(++event_serial_);
  }
  bool event_done(Event event) override { return reinterpret_cast<uintptr_t>(event) <= completed_up_to_; }
  void complete_events() { completed_up_to_ = event_serial_; }

  size_t in_use() const { return in_use_; }
  size_t live_segments() const { return live_.size(); }
  int mallocs() const { return mallocs_; }
  int frees() const { return frees_; }
  int bad_frees() const { return bad_frees_; }

 private:
  static constexpr uintptr_t kGuardBytes = 4096;
  size_t capacity_;
  size_t in_use_ = 0;
  uintptr_t next_address_ = uintptr_t{1} << 40;
  std::map<void*, size_t> live_;
  int mallocs_ = 0, frees_ = 0, bad_frees_ = 0;
  uintptr_t event_serial_ = 0, completed_up_to_ = 0;
  int pending_events_ = 0;
};

}  // namespace ember::test
