#include "memory/simulation.h"

#include <cstdint>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/simulation.h"
#include "memory/caching_allocator.h"

namespace ember {
namespace {

// Address space and nothing else: a bump pointer far above any real mapping, so a stray
// read of a simulated tensor faults instead of reading someone else's bytes. Addresses
// are never reused; 2^46 bytes of them outlast any plan.
class SimulatedBackend final : public RawBackend {
 public:
  SimulatedBackend(Device device, size_t capacity) : device_(device), capacity_(capacity) {}
  void* malloc(size_t bytes) override {
    if (capacity_ != 0 && in_use_ + bytes > capacity_) return nullptr;
    in_use_ += bytes;
    void* ptr = reinterpret_cast<void*>(next_);
    next_ += (bytes + kAlign - 1) / kAlign * kAlign;
    return ptr;
  }
  void free(void* /*ptr*/, size_t bytes) noexcept override { in_use_ -= bytes; }
  size_t capacity() const override { return capacity_; }
  void set_capacity(size_t bytes) override { capacity_ = bytes; }
  Device device() const override { return device_; }
  std::string name() const override { return "simulated " + device_.str(); }
  void fill_bytes(void*, unsigned char, size_t) override {}
  void read_bytes(const void*, void* host, size_t bytes) override { std::memset(host, 0, bytes); }

 private:
  static constexpr uintptr_t kAlign = 512;
  Device device_;
  size_t capacity_;
  size_t in_use_ = 0;
  uintptr_t next_ = uintptr_t{1} << 46;
};

thread_local bool simulation_alive = false;

}  // namespace

SimulationScope::SimulationScope(Device device, size_t capacity) {
  EMBER_CHECK(!simulation_alive, "SimulationScope: simulations do not nest");
  allocator_ = new CachingAllocator(std::make_unique<SimulatedBackend>(device, capacity));
  scope_.emplace(device, *allocator_);
  simulation_alive = true;
  set_simulating(true);
}

SimulationScope::~SimulationScope() {
  set_simulating(false);
  simulation_alive = false;
  scope_.reset();
  // Tensors still alive release into this allocator later: it stays (a few hundred bytes) if any do.
  if (allocator_->stats().allocated_bytes.current == 0) delete allocator_;
}

}  // namespace ember
