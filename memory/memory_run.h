#pragma once
// A recorded run as a file: the recorder's timeline and peak with what ran (model, batch,
// techniques, time per step). `--memory-json` writes one; `ember compare` reads two.
//
//   MemoryRun run = memory_run_from(recorder, "convnet, batch 256, fp16", {{"ms_per_step", 80.1}});
//   save_memory_run("fp16.json", run);
//   MemoryRun again = load_memory_run("fp16.json");  // a bad file's error names it and the field
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memory/recorder.h"

namespace ember {

struct MemoryRun {
  std::string title;
  std::string device;
  nlohmann::ordered_json facts = nlohmann::ordered_json::object();  // what ran; "ms_per_step" when timed
  std::vector<MemoryRecorder::Sample> samples;
  MemoryRecorder::Sample peak;  // the sample with the most allocated bytes

  // Each category's own highest live bytes over the samples (not necessarily at the peak).
  std::array<int64_t, kNumMemoryCategories> peak_by_category() const;
  int64_t peak_reserved() const;
};

MemoryRun memory_run_from(const MemoryRecorder& recorder, std::string title, nlohmann::ordered_json facts);
// Writes to a temporary file beside `path` and renames it, so a failed write leaves any old file.
void save_memory_run(const std::string& path, const MemoryRun& run);
MemoryRun load_memory_run(const std::string& path);
// The same for a file's text in memory; `name` (the file) labels the errors.
MemoryRun parse_memory_run(const std::string& text, const std::string& name);

}  // namespace ember
