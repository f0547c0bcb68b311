#pragma once
// Prefetcher: runs produce(0), produce(1), ..., produce(count - 1) on one
// background thread and hands the results over in order through a bounded queue.
//
//   Prefetcher p(num_batches, /*depth=*/2, [&](int64_t k) { return make_batch(k); });
//   Batch b;
//   while (p.pop(b)) train_step(b);
//
// Invariant the pinned-memory path relies on: the thread starts produce(k) only
// when fewer than `depth` results wait in the queue, so at most depth + 1 results
// exist between produce and the consumer finishing with what it popped last.
// An exception thrown by produce is stored and rethrown by pop() after the
// results produced before it; the destructor stops the thread and joins it.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "data/batch.h"

namespace ember::data {

class Prefetcher {
 public:
  using Produce = std::function<Batch(int64_t)>;
  Prefetcher(int64_t count, int64_t depth, Produce produce);
  ~Prefetcher();  // never throws, never hangs: wakes the thread and joins it
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // The next result, in order; false after the last one. Rethrows produce's exception.
  bool pop(Batch& out);

 private:
  void run();

  const int64_t count_;
  const int64_t depth_;
  Produce produce_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> queue_;
  std::exception_ptr error_;
  bool finished_ = false;  // the thread produced everything or failed
  bool stop_ = false;      // the owner is going away
  std::thread thread_;     // last: starts after every other member exists
};

}  // namespace ember::data
