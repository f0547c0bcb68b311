#include "memory/memory_run.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/bad_alloc_error.h"
#include "core/error.h"
#include "memory/scopes.h"

namespace ember {

namespace {

constexpr const char* kFormat = "ember-memory-run";
constexpr int kVersion = 1;
constexpr int kMaxDepth = 8;       // the format nests 4 deep; anything deeper is not ours
constexpr int kFixedColumns = 5;   // time_ms, step, phase, allocated, reserved; then the categories

nlohmann::ordered_json sample_row(const MemoryRecorder::Sample& s) {
  nlohmann::ordered_json row = {s.time_ms, s.step, static_cast<int>(s.phase), s.allocated, s.reserved};
  for (int64_t bytes : s.by_category) row.push_back(bytes);
  return row;
}

class RunReader {
 public:
  explicit RunReader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    EMBER_THROW("memory run '" << path_ << "': field '" << field << "' " << problem
                               << " (write the file with save_memory_run)");
  }
  const nlohmann::json& member(const nlohmann::json& parent, const char* key, const std::string& field) const {
    if (!parent.is_object() || !parent.contains(key)) fail(field, "is missing");
    return parent.at(key);
  }
  int64_t count(const nlohmann::json& value, const std::string& field) const {
    if (!value.is_number_integer() || value.get<int64_t>() < 0) fail(field, "must be a whole number >= 0");
    return value.get<int64_t>();
  }
  double number(const nlohmann::json& value, const std::string& field) const {
    if (!value.is_number() || value.get<double>() < 0) fail(field, "must be a number >= 0");
    return value.get<double>();
  }
  MemoryRecorder::Sample sample(const nlohmann::json& row, const std::string& field,
                                const std::vector<int>& category_of_column) const {
    const size_t columns = kFixedColumns + category_of_column.size();
    if (!row.is_array() || row.size() != columns)
      fail(field, "must be an array of " + std::to_string(columns) + " numbers");
    MemoryRecorder::Sample s;
    s.time_ms = number(row[0], field + "[0] (time_ms)");
    s.step = static_cast<int>(std::min<int64_t>(count(row[1], field + "[1] (step)"), INT32_MAX));
    const int64_t phase = count(row[2], field + "[2] (phase)");
    if (phase >= kNumPhases) fail(field + "[2] (phase)", "must be below " + std::to_string(kNumPhases));
    s.phase = static_cast<Phase>(phase);
    s.allocated = count(row[3], field + "[3] (allocated)");
    s.reserved = count(row[4], field + "[4] (reserved)");
    for (size_t k = 0; k < category_of_column.size(); ++k)
      s.by_category[static_cast<size_t>(category_of_column[k])] =
          count(row[kFixedColumns + k], field + "[" + std::to_string(kFixedColumns + k) + "]");
    return s;
  }

 private:
  std::string path_;
};

}  // namespace

std::array<int64_t, kNumMemoryCategories> MemoryRun::peak_by_category() const {
  std::array<int64_t, kNumMemoryCategories> out{};
  for (const auto& s : samples)
    for (size_t c = 0; c < out.size(); ++c) out[c] = std::max(out[c], s.by_category[c]);
  return out;
}

int64_t MemoryRun::peak_reserved() const {
  int64_t out = 0;
  for (const auto& s : samples) out = std::max(out, s.reserved);
  return out;
}

MemoryRun memory_run_from(const MemoryRecorder& recorder, std::string title, nlohmann::ordered_json facts) {
  MemoryRun run;
  run.title = std::move(title);
  run.device = recorder.device().str();
  run.facts = std::move(facts);
  run.samples = recorder.samples();
  run.peak = recorder.peak();
  return run;
}

void save_memory_run(const std::string& path, const MemoryRun& run) {
  nlohmann::ordered_json categories = nlohmann::ordered_json::array(), phases = nlohmann::ordered_json::array();
  for (int c = 0; c < kNumMemoryCategories; ++c) categories.push_back(category_name(static_cast<MemoryCategory>(c)));
  for (int p = 0; p < kNumPhases; ++p) phases.push_back(phase_name(static_cast<Phase>(p)));
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& s : run.samples) rows.push_back(sample_row(s));
  const nlohmann::ordered_json doc = {
      {"format", kFormat},
      {"version", kVersion},
      {"title", run.title},
      {"device", run.device},
      {"run", run.facts},
      {"categories", categories},
      {"phases", phases},
      {"columns", "time_ms, step, phase (index into phases), allocated, reserved, then bytes per category"},
      {"peak", sample_row(run.peak)},
      {"samples", rows}};
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    EMBER_CHECK(out.good(), "memory run: cannot open '" << temporary << "' for writing");
    out << doc.dump() << "\n";
    EMBER_CHECK(out.good(), "memory run: writing '" << temporary << "' failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    EMBER_THROW("memory run: cannot move '" << temporary << "' to '" << path << "'");
  }
}

namespace {

MemoryRun parse_run(const std::string& text, const std::string& name) {
  const RunReader reader(name);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxDepth) reader.fail("(document)", "nests deeper than " + std::to_string(kMaxDepth) + " levels");
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    EMBER_THROW("memory run '" << name << "': not JSON (" << e.what() << ")");
  }
  if (doc.is_object() && doc.contains("traceEvents"))
    reader.fail("format", "is missing: this is a Chrome-trace (Perfetto) file, not a memory run (save_memory_run writes those)");
  const nlohmann::json& format = reader.member(doc, "format", "format");
  if (format != kFormat) reader.fail("format", std::string("must be \"") + kFormat + "\"");
  if (reader.member(doc, "version", "version") != kVersion)
    reader.fail("version", "must be " + std::to_string(kVersion) + " (written by another ember version)");

  // Columns follow the file's own category list, so a file stays readable if categories move.
  const nlohmann::json& categories = reader.member(doc, "categories", "categories");
  if (!categories.is_array()) reader.fail("categories", "must be an array of category names");
  std::vector<int> category_of_column;
  for (size_t k = 0; k < categories.size(); ++k) {
    int found = -1;
    for (int c = 0; c < kNumMemoryCategories; ++c)
      if (categories[k] == category_name(static_cast<MemoryCategory>(c))) found = c;
    if (found < 0) reader.fail("categories[" + std::to_string(k) + "]", "is not a memory category ember knows");
    category_of_column.push_back(found);
  }

  MemoryRun run;
  const nlohmann::json& title = reader.member(doc, "title", "title");
  const nlohmann::json& device = reader.member(doc, "device", "device");
  if (!title.is_string()) reader.fail("title", "must be a string");
  if (!device.is_string()) reader.fail("device", "must be a string");
  run.title = title.get<std::string>();
  run.device = device.get<std::string>();
  const nlohmann::json& facts = reader.member(doc, "run", "run");
  if (!facts.is_object()) reader.fail("run", "must be an object");
  run.facts = nlohmann::ordered_json::parse(facts.dump());
  run.peak = reader.sample(reader.member(doc, "peak", "peak"), "peak", category_of_column);
  const nlohmann::json& rows = reader.member(doc, "samples", "samples");
  if (!rows.is_array() || rows.empty()) reader.fail("samples", "must be a non-empty array of samples");
  run.samples.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    run.samples.push_back(reader.sample(rows[i], "samples[" + std::to_string(i) + "]", category_of_column));
    if (i > 0 && run.samples[i].time_ms < run.samples[i - 1].time_ms)
      reader.fail("samples[" + std::to_string(i) + "][0] (time_ms)", "goes back in time");
  }
  return run;
}

}  // namespace

MemoryRun load_memory_run(const std::string& path) {
  std::ifstream in(path);
  EMBER_CHECK(in.good(), "memory run: cannot open '" << path << "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse_memory_run(text.str(), path);
}

MemoryRun parse_memory_run(const std::string& text, const std::string& name) {
  return with_bad_alloc_as_error("memory run '" + name + "'", [&] { return parse_run(text, name); });
}

}  // namespace ember
