#include "apps/memory_session.h"

#include <CLI/CLI.hpp>

#include "apps/cli_checks.h"
#include "apps/output_path.h"
#include "memory/byte_size.h"
#include "memory/memory.h"
#include "memory/memory_run.h"
#include "memory/report.h"

namespace ember::apps {

void add_memory_options(CLI::App* command, MemoryOptions& o) {
  command->add_option("--memory-report", o.report_path,
                      "Write an HTML page showing where memory goes during the first training steps");
  command->add_option("--memory-trace", o.trace_path, "Write the same events as Chrome-trace/Perfetto JSON");
  command->add_option("--memory-json", o.run_path,
                      "Write the timeline, peaks and time per step as JSON for `ember compare`");
  command->add_option("--memory-limit", o.limit,
                      "Cap host memory (e.g. 64MiB, 2GiB), as EMBER_CPU_MEMORY_LIMIT does");
  command->add_option("--memory-steps", o.record_steps, "Training steps the memory report covers")
      ->check(positive_integer())
      ->capture_default_str();
}

MemorySession::MemorySession(const MemoryOptions& options, Device device, std::string title)
    : options_(options), device_(device), title_(std::move(title)) {
  check_writable(options_.report_path, "--memory-report");
  check_writable(options_.trace_path, "--memory-trace");
  check_writable(options_.run_path, "--memory-json");
  if (!options_.limit.empty()) set_cpu_memory_limit(parse_byte_size(options_.limit, "--memory-limit"));
  if (!options_.report_path.empty() || !options_.trace_path.empty() || !options_.run_path.empty()) {
    recorder_ = std::make_unique<MemoryRecorder>(device_);
    recorder_->start();
  }
}

MemorySession::~MemorySession() {
  if (recorder_) recorder_->stop();
}

void MemorySession::begin_step(int64_t step) {
  if (!recorder_) return;
  if (step >= options_.record_steps) recorder_->stop();
  else recorder_->set_step(static_cast<int>(step));
}

std::string MemorySession::finish(const nlohmann::ordered_json& facts) {
  if (!recorder_) return "";
  recorder_->stop();
  std::string written;
  if (!options_.report_path.empty()) {
    write_memory_report_html(options_.report_path, *recorder_, title_, memory_summary(device_));
    written += options_.report_path;
  }
  if (!options_.trace_path.empty()) {
    write_memory_trace_json(options_.trace_path, *recorder_);
    written += (written.empty() ? "" : ", ") + options_.trace_path;
  }
  if (!options_.run_path.empty()) {
    save_memory_run(options_.run_path, memory_run_from(*recorder_, title_, facts));
    written += (written.empty() ? "" : ", ") + options_.run_path;
  }
  return written;
}

}  // namespace ember::apps
