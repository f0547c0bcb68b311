#pragma once
// The memory flags every training command shares, and the session that acts on
// them: a host memory cap, and a recorder over the first few training steps
// whose picture and trace are written at the end.
//
//   ember train --model convnet --memory-report mem.html --memory-trace mem.json
//   ember train --model convnet --batch 512 --memory-limit 64MiB     # a realistic OOM on the CPU
//   ember bench-train --model convnet --precision fp16 --memory-json fp16.json   # for `ember compare`
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "memory/recorder.h"

namespace CLI {
class App;
}

namespace ember::apps {

struct MemoryOptions {
  std::string report_path;  // --memory-report: self-contained HTML page
  std::string trace_path;   // --memory-trace: Chrome-trace / Perfetto JSON
  std::string run_path;     // --memory-json: the timeline and what ran, for `ember compare` (memory/memory_run.h)
  std::string limit;        // --memory-limit: host memory cap, e.g. 512MiB
  int record_steps = 3;     // --memory-steps: training steps the recorder covers
};

void add_memory_options(CLI::App* command, MemoryOptions& options);

class MemorySession {
 public:
  // Applies the limit and, when a report or trace is asked for, starts recording.
  MemorySession(const MemoryOptions& options, Device device, std::string title);
  ~MemorySession();
  // Called before every training step; recording stops after options.record_steps steps.
  void begin_step(int64_t step);
  // Writes the report, the trace and the run file (those asked for); `facts` (what ran, its
  // ms_per_step) go into the run file. Returns the paths written, for messages.
  std::string finish(const nlohmann::ordered_json& facts = nlohmann::ordered_json::object());

 private:
  MemoryOptions options_;
  Device device_;
  std::string title_;
  std::unique_ptr<MemoryRecorder> recorder_;
};

}  // namespace ember::apps
