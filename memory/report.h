#pragma once
// Exports of a MemoryRecorder:
//  - a self-contained HTML page with an SVG picture: live bytes by category over
//    time (stacked), training phases shaded, reserved vs allocated, the peak
//    marked with the ten largest live allocations, and the statistics table;
//  - a Chrome-trace / Perfetto JSON with the same events as counters.
//
//   write_memory_report_html("mem.html", recorder, "ConvNet batch 64", memory_summary(kCPU));
//   write_memory_trace_json("mem.json", recorder);   // open in ui.perfetto.dev or chrome://tracing
//  - two recorded runs (memory/memory_run.h) side by side: `ember compare`.
//
//   write_memory_compare_html("compare.html", load_memory_run("a.json"), load_memory_run("b.json"));
#include <string>
#include <vector>

#include "memory/memory_run.h"
#include "memory/recorder.h"

namespace ember {

void write_memory_report_html(const std::string& path, const MemoryRecorder& recorder, const std::string& title,
                              const std::string& summary_table);
void write_memory_trace_json(const std::string& path, const MemoryRecorder& recorder);

// One line of a comparison: a figure of run a and of run b.
struct RunDifference {
  std::string what;   // "peak allocated", "activation (own peak)", "time per step"
  double a = 0.0, b = 0.0;
  bool bytes = true;  // false: milliseconds
};
// Peak allocated and reserved, each category's own peak, and the time per step when both
// runs were timed.
std::vector<RunDifference> run_differences(const MemoryRun& a, const MemoryRun& b);
// Both timelines one above the other on the same time and byte scale, and the table above.
void write_memory_compare_html(const std::string& path, const MemoryRun& a, const MemoryRun& b);

}  // namespace ember
