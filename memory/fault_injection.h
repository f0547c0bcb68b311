#pragma once
// FaultInjectingBackend: a raw backend (memory/raw_backend.h) wrapped so that its malloc
// refuses on demand, to check that an out-of-memory at any point of a program leaves it
// consistent. A refusal is a nullptr, as from a full device, so the allocator above takes
// the same road: its retry rungs, then OutOfMemoryError (memory/caching_allocator.cpp).
//
//   auto owned = std::make_unique<FaultInjectingBackend>(make_host_backend(0));
//   FaultInjectingBackend& faults = *owned;
//   DirectAllocator allocator(std::move(owned));   // or a CachingAllocator
//   faults.fail_from(3);    // the 3rd backend malloc from now and every later one refuse
//   faults.fail_once(3);    // only the 3rd refuses (a transient failure a retry gets past)
//   faults.fail_every(5);   // the 5th, 10th, 15th, ... from now refuse
//   faults.lift();          // no more refusals
//   faults.mallocs();       // backend mallocs so far, refused ones included
//
// Counting starts at the call that arms a fault. Everything else (free, events, capacity,
// name) goes straight to the wrapped backend. tests/train/test_trainer_faults.cpp fails every
// allocation of a training step in turn with it.
//
// EMBER_FAULT_INJECTION=from:K (or once:K, every:K) arms the process's own allocators the same
// way when they are made (memory/memory.cpp; docs/memory.md shows it in `ember train`).
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "memory/raw_backend.h"

namespace ember {

class FaultInjectingBackend final : public RawBackend {
 public:
  explicit FaultInjectingBackend(std::unique_ptr<RawBackend> inner);

  void fail_from(int64_t k);
  void fail_once(int64_t k);
  void fail_every(int64_t k);
  // "from:K", "once:K" or "every:K" as the calls above; `what` names the text's source in errors.
  void arm(const std::string& spec, const char* what);
  void lift();

  int64_t mallocs() const;
  int64_t refusals() const;
  size_t live_bytes() const;  // held from the wrapped backend now

  void* malloc(size_t bytes) override;
  void free(void* ptr, size_t bytes) noexcept override;
  size_t capacity() const override { return inner_->capacity(); }
  void set_capacity(size_t bytes) override { inner_->set_capacity(bytes); }
  bool record_event(StreamHandle stream, Event& event) override { return inner_->record_event(stream, event); }
  bool event_done(Event event) override { return inner_->event_done(event); }
  bool synchronize_event(Event event) override { return inner_->synchronize_event(event); }
  bool synchronize_stream(StreamHandle stream) override { return inner_->synchronize_stream(stream); }
  void destroy_event(Event event) noexcept override { inner_->destroy_event(event); }
  Device device() const override { return inner_->device(); }
  std::string name() const override { return inner_->name(); }
  void fill_bytes(void* ptr, unsigned char value, size_t bytes) override { inner_->fill_bytes(ptr, value, bytes); }
  void read_bytes(const void* ptr, void* host, size_t bytes) override { inner_->read_bytes(ptr, host, bytes); }

 private:
  enum class Mode { none, from, once, every };
  void set_fault(Mode mode, int64_t k);
  bool refuse_next();  // under mutex_

  std::unique_ptr<RawBackend> inner_;
  mutable std::mutex mutex_;  // the direct allocator calls malloc outside its own lock
  Mode mode_ = Mode::none;
  int64_t k_ = 0;
  int64_t armed_calls_ = 0;  // mallocs since the fault was armed
  int64_t mallocs_ = 0;
  int64_t refusals_ = 0;
  size_t live_bytes_ = 0;
};

}  // namespace ember
