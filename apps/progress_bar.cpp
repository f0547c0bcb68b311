#include "apps/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace ember::apps {

namespace {
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);  // 10 redraws/s: smooth, and cheap
constexpr int kBarWidth = 20;

std::string format_rate(double per_second) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1);
  if (per_second >= 1e6) os << per_second / 1e6 << "M";
  else if (per_second >= 1e3) os << per_second / 1e3 << "k";
  else os << per_second;
  return os.str();
}

std::string format_duration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(std::max(seconds, 0.0)));
  std::ostringstream os;
  os << s / 60 << ":" << std::setw(2) << std::setfill('0') << s % 60;
  return os.str();
}
}  // namespace

ProgressBar::ProgressBar(std::ostream& out, int64_t total, std::string label, bool enabled)
    : out_(out), total_(total), label_(std::move(label)), enabled_(enabled && total > 0), start_(Clock::now()),
      last_draw_(start_ - kRedrawInterval) {}

ProgressBar::~ProgressBar() {
  // finish() may be skipped when an exception unwinds; leave the terminal tidy anyway.
  if (drawn_) {
    try {
      finish();
    } catch (...) {
    }
  }
}

std::string ProgressBar::render(const std::string& label, int64_t done, int64_t total, double loss,
                                double items_per_second) {
  const double fraction = total > 0 ? std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0) : 0;
  const int filled = static_cast<int>(fraction * kBarWidth);
  std::ostringstream os;
  os << label << " [" << std::string(static_cast<size_t>(filled), '#')
     << std::string(static_cast<size_t>(kBarWidth - filled), '.') << "] " << done << "/" << total << "  loss "
     << std::fixed << std::setprecision(4) << loss << "  " << format_rate(items_per_second) << " items/s";
  if (items_per_second > 0) os << "  ETA " << format_duration(static_cast<double>(total - done) / items_per_second);
  return os.str();
}

void ProgressBar::update(int64_t done, double loss) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (now - last_draw_ < kRedrawInterval && done < total_) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const std::string line = render(label_, done, total_, loss, seconds > 0 ? static_cast<double>(done) / seconds : 0);
  // Pad with spaces so a shorter line fully covers the previous one.
  out_ << '\r' << line << std::string(last_width_ > line.size() ? last_width_ - line.size() : 0, ' ') << std::flush;
  last_width_ = line.size();
  drawn_ = true;
}

void ProgressBar::finish() {
  if (!drawn_) return;
  out_ << '\r' << std::string(last_width_, ' ') << '\r' << std::flush;
  drawn_ = false;
  last_width_ = 0;
}

bool ProgressBar::stdout_is_terminal() { return isatty(fileno(stdout)) != 0; }

}  // namespace ember::apps
