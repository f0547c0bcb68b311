#include "memory/fault_injection.h"

#include "core/error.h"

namespace ember {

FaultInjectingBackend::FaultInjectingBackend(std::unique_ptr<RawBackend> inner) : inner_(std::move(inner)) {
  EMBER_CHECK(inner_ != nullptr, "FaultInjectingBackend: the wrapped backend is null");
}

void FaultInjectingBackend::set_fault(Mode mode, int64_t k) {
  EMBER_CHECK(k >= 1, "fault injection: k counts backend mallocs from 1, got " << k);
  std::lock_guard<std::mutex> lock(mutex_);
  mode_ = mode;
  k_ = k;
  armed_calls_ = 0;
}

void FaultInjectingBackend::fail_from(int64_t k) { set_fault(Mode::from, k); }
void FaultInjectingBackend::fail_once(int64_t k) { set_fault(Mode::once, k); }
void FaultInjectingBackend::fail_every(int64_t k) { set_fault(Mode::every, k); }

void FaultInjectingBackend::arm(const std::string& spec, const char* what) {
  const size_t colon = spec.find(':');
  const std::string mode = spec.substr(0, colon), count = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const bool number = !count.empty() && count.size() <= 18 && count.find_first_not_of("0123456789") == std::string::npos;
  const int64_t k = number ? std::stoll(count) : 0;
  EMBER_CHECK(k >= 1 && (mode == "from" || mode == "once" || mode == "every"),
              what << "='" << spec << "': expected from:K (the K-th backend allocation and every later one fail), "
                                      "once:K (only the K-th) or every:K, with K >= 1");
  set_fault(mode == "from" ? Mode::from : mode == "once" ? Mode::once : Mode::every, k);
}

void FaultInjectingBackend::lift() {
  std::lock_guard<std::mutex> lock(mutex_);
  mode_ = Mode::none;
}

bool FaultInjectingBackend::refuse_next() {
  const int64_t n = ++armed_calls_;
  switch (mode_) {
    case Mode::none: return false;
    case Mode::from: return n >= k_;
    case Mode::once: return n == k_;
    case Mode::every: return n % k_ == 0;
  }
  return false;
}

void* FaultInjectingBackend::malloc(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++mallocs_;
  if (refuse_next()) {
    ++refusals_;
    return nullptr;
  }
  void* p = inner_->malloc(bytes);
  if (p != nullptr) live_bytes_ += bytes;
  return p;
}

void FaultInjectingBackend::free(void* ptr, size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  inner_->free(ptr, bytes);
  live_bytes_ -= bytes;
}

int64_t FaultInjectingBackend::mallocs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return mallocs_;
}

int64_t FaultInjectingBackend::refusals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refusals_;
}

size_t FaultInjectingBackend::live_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_bytes_;
}

}  // namespace ember
