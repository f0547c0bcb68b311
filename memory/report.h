#pragma once
// Exports of a MemoryRecorder:
//  - a self-contained HTML page with an SVG picture: live bytes by category over
//    time (stacked), training phases shaded, reserved vs allocated, the peak
//    marked with the ten largest live allocations, and the statistics table;
//  - a Chrome-trace / Perfetto JSON with the same events as counters.
//
//   write_memory_report_html("mem.html", recorder, "ConvNet batch 64", memory_summary(kCPU));
//   write_memory_trace_json("mem.json", recorder);   // open in ui.perfetto.dev or chrome://tracing
#include <string>

#include "memory/recorder.h"

namespace ember {

void write_memory_report_html(const std::string& path, const MemoryRecorder& recorder, const std::string& title,
                              const std::string& summary_table);
void write_memory_trace_json(const std::string& path, const MemoryRecorder& recorder);

}  // namespace ember
