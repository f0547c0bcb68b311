// Chrome-trace / Perfetto export: one counter track per category plus reserved
// and allocated totals, and one slice per run of a training phase.
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "memory/report.h"

namespace ember {

void write_memory_trace_json(const std::string& path, const MemoryRecorder& recorder) {
  using nlohmann::json;
  const std::vector<MemoryRecorder::Sample> samples = recorder.samples();
  json events = json::array();
  constexpr double kMiB = 1024.0 * 1024.0;
  for (const auto& s : samples) {
    json by_category = json::object();
    for (int c = 0; c < kNumMemoryCategories; ++c)
      by_category[category_name(static_cast<MemoryCategory>(c))] = s.by_category[static_cast<size_t>(c)] / kMiB;
    const double ts = s.time_ms * 1000.0;  // microseconds
    events.push_back({{"name", "bytes by category (MiB)"}, {"ph", "C"}, {"ts", ts}, {"pid", 1}, {"args", by_category}});
    events.push_back({{"name", "allocator (MiB)"}, {"ph", "C"}, {"ts", ts}, {"pid", 1},
                      {"args", {{"allocated", s.allocated / kMiB}, {"reserved", s.reserved / kMiB}}}});
  }
  for (size_t i = 0; i < samples.size();) {  // phase runs as slices
    size_t j = i;
    while (j + 1 < samples.size() && samples[j + 1].phase == samples[i].phase && samples[j + 1].step == samples[i].step) ++j;
    const double begin = samples[i].time_ms * 1000.0;
    const double end = (j + 1 < samples.size() ? samples[j + 1].time_ms : samples[j].time_ms) * 1000.0;
    events.push_back({{"name", phase_name(samples[i].phase)}, {"ph", "X"}, {"ts", begin}, {"dur", end - begin},
                      {"pid", 1}, {"tid", 1}, {"args", {{"step", samples[i].step}}}});
    i = j + 1;
  }
  json trace = {{"traceEvents", events}, {"displayTimeUnit", "ms"},
                {"otherData", {{"device", recorder.device().str()}, {"peak_allocated_bytes", recorder.peak().allocated}}}};
  std::ofstream out(path);
  EMBER_CHECK(out.good(), "memory trace: cannot open '" << path << "' for writing");
  out << trace.dump();
  EMBER_CHECK(out.good(), "memory trace: writing '" << path << "' failed");
}

}  // namespace ember
