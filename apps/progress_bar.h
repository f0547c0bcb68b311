#pragma once
// A one-line terminal progress bar, redrawn in place with '\r':
//
//   epoch 3/20 [############........] 1920/3000  loss 0.4312  52.1k items/s  ETA 0:01
//
//   ember::apps::ProgressBar bar(std::cout, dataset_size, "epoch 3/20", ProgressBar::stdout_is_terminal());
//   bar.update(done, loss);   // cheap: redraws at most every kRedrawInterval
//   bar.finish();             // erases the line so the epoch's table row can take it
//
// Disabled (every call a no-op) when the output is not a terminal or with --json.
#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace ember::apps {

class ProgressBar {
 public:
  ProgressBar(std::ostream& out, int64_t total, std::string label, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(int64_t done, double loss);
  void finish();
  bool enabled() const { return enabled_; }

  // The line for a state, without '\r' (for tests and for update()).
  static std::string render(const std::string& label, int64_t done, int64_t total, double loss,
                            double items_per_second);
  static bool stdout_is_terminal();

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& out_;
  int64_t total_;
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  size_t last_width_ = 0;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

}  // namespace ember::apps
