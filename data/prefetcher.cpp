#include "data/prefetcher.h"

#include "core/error.h"

namespace ember::data {

Prefetcher::Prefetcher(int64_t count, int64_t depth, Produce produce)
    : count_(count), depth_(depth), produce_(std::move(produce)) {
  EMBER_CHECK(depth_ >= 1, "Prefetcher: depth " << depth_ << " must be >= 1");
  thread_ = std::thread([this] { run(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Prefetcher::run() {
  try {
    for (int64_t k = 0; k < count_; ++k) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || static_cast<int64_t>(queue_.size()) < depth_; });
        if (stop_) break;
      }
      Batch batch = produce_(k);  // outside the lock: the consumer keeps popping meanwhile
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(batch));
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  changed_.notify_all();
}

bool Prefetcher::pop(Batch& out) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !queue_.empty() || finished_; });
  if (!queue_.empty()) {
    out = std::move(queue_.front());
    queue_.pop_front();
    changed_.notify_all();
    return true;
  }
  if (error_) {
    std::exception_ptr error = error_;
    error_ = nullptr;  // rethrown once; later pops report the end
    std::rethrow_exception(error);
  }
  return false;
}

}  // namespace ember::data
