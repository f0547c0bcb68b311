#pragma once
// A raw backend with a fixed capacity that hands out fake, never-dereferenced
// addresses, and stream events the test completes by hand (or makes fail, as a
// CUDA event call can). It lets the caching allocator's policy be tested on the
// CPU, byte for byte.
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

  // Events stay pending until the test completes them (complete_events, complete_stream) or
  // the allocator waits on them (synchronize_*: the host would block until the GPU got there).
  bool record_event(StreamHandle stream, Event& event) override {
    if (fail_event_creation_) return false;
    ++event_serial_;
    if (fail_event_record_) return false;  // made, not recorded: the backend destroys it again
    events_[event_serial_] = EventState{stream, false};
    event = reinterpret_cast<Event>(event_serial_);
    return true;
  }
  bool event_done(Event event) override {
    const EventState* state = find_event(event);
    return state != nullptr && state->done;
  }
  bool synchronize_event(Event event) override {
    ++event_synchronizations_;
    EventState* state = find_event(event);
    if (fail_synchronize_ || state == nullptr) return false;
    state->done = true;
    return true;
  }
  bool synchronize_stream(StreamHandle stream) override {
    ++stream_synchronizations_;
    if (fail_synchronize_) return false;
    complete_stream(stream);
    return true;
  }
  void destroy_event(Event event) noexcept override {
    if (events_.erase(reinterpret_cast<uintptr_t>(event)) == 0) ++bad_event_uses_;
  }

  void complete_events() {
    for (auto& entry : events_) entry.second.done = true;
  }
  void complete_stream(StreamHandle stream) {
    for (auto& entry : events_)
      if (entry.second.stream == stream) entry.second.done = true;
  }
  // What a failing cudaEventCreate, cudaEventRecord or cudaEventSynchronize/cudaStreamSynchronize does.
  void fail_event_creation(bool on) { fail_event_creation_ = on; }
  void fail_event_record(bool on) { fail_event_record_ = on; }
  void fail_synchronize(bool on) { fail_synchronize_ = on; }
  size_t live_events() const { return events_.size(); }  // recorded and not destroyed
  int event_synchronizations() const { return event_synchronizations_; }
  int stream_synchronizations() const { return stream_synchronizations_; }
  int bad_event_uses() const { return bad_event_uses_; }  // destroyed twice, or never made

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
  struct EventState {
    StreamHandle stream;
    bool done;
  };
  EventState* find_event(Event event) {
    auto it = events_.find(reinterpret_cast<uintptr_t>(event));
    if (it != events_.end()) return &it->second;
    ++bad_event_uses_;
    return nullptr;
  }
  uintptr_t event_serial_ = 0;
  std::map<uintptr_t, EventState> events_;
  bool fail_event_creation_ = false, fail_event_record_ = false, fail_synchronize_ = false;
  int event_synchronizations_ = 0, stream_synchronizations_ = 0, bad_event_uses_ = 0;
};

}  // namespace ember::test
