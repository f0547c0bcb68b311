// The recorder sees every allocation with its category, phase, op and shape;
// the HTML and trace exports hold what a student needs to read a step.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "autograd/grad_mode.h"
#include "memory/memory.h"
#include "memory/report.h"
#include "memory/scopes.h"
#include "tests/data/temp_dir.h"
#include "tests/support/expect.h"

using namespace ember;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A tiny training step with the phases a real loop sets.
void tiny_step(Tensor w) {
  Tensor loss;
  {
    PhaseScope phase(Phase::forward);
    CategoryScope category(MemoryCategory::activation);
    Tensor x = randn({64, 128});
    loss = sum(tanh(matmul(x, w)));
  }
  loss.backward();
  {
    PhaseScope phase(Phase::optimizer);
    NoGradGuard no_grad;
    w.add_(w.grad(), -0.01);
  }
}

}  // namespace

TEST_CASE("the recorder tracks categories, phases, the peak and its largest allocations", "[recorder]") {
  Tensor w;
  {
    CategoryScope scope(MemoryCategory::parameter);
    w = randn({128, 256}).requires_grad_();
  }
  MemoryRecorder recorder(kCPU);
  recorder.start();
  for (int step = 0; step < 2; ++step) {
    recorder.set_step(step);
    tiny_step(w);
    w.zero_grad();
  }
  recorder.stop();
  const auto samples = recorder.samples();
  REQUIRE(!samples.empty());
  bool saw_forward = false, saw_backward = false;
  for (const auto& s : samples) {
    saw_forward |= s.phase == Phase::forward;
    saw_backward |= s.phase == Phase::backward;
    for (int64_t bytes : s.by_category) CHECK(bytes >= 0);
  }
  CHECK(saw_forward);
  CHECK(saw_backward);
  // The parameter existed before recording started and is counted from the allocator's stats.
  const auto param = static_cast<size_t>(MemoryCategory::parameter);
  CHECK(samples.front().by_category[param] >= 128 * 256 * 4);
  const auto& peak = recorder.peak();
  CHECK(peak.allocated >= 128 * 256 * 4 + 64 * 256 * 4);
  const auto largest = recorder.largest_at_peak();
  REQUIRE(!largest.empty());
  CHECK(largest.size() <= 10);
  for (size_t i = 1; i < largest.size(); ++i) CHECK(largest[i - 1].bytes >= largest[i].bytes);
  // matmul's output dies once tanh has run (tanh saves only its own output), so at the
  // peak the largest live activation is tanh's [64, 256] output.
  bool saw_tanh = false;
  for (const auto& a : largest) INFO(a.op << " " << a.shape << " " << category_name(a.category) << " " << a.bytes);
  std::ostringstream listing;
  for (const auto& a : largest) listing << a.op << " " << a.shape << " " << category_name(a.category) << " " << a.bytes << "\n";
  INFO(listing.str());
  for (const auto& a : largest) saw_tanh |= a.op == std::string("tanh") && a.shape == "[64, 256]";
  CHECK(saw_tanh);
  const size_t events_before = recorder.samples().size();
  Tensor after_stop = randn({10});
  CHECK(recorder.samples().size() == events_before);  // stopped means stopped
}

TEST_CASE("the HTML report and the Chrome trace are complete", "[recorder]") {
  Tensor w = randn({128, 256}).requires_grad_();
  MemoryRecorder recorder(kCPU);
  recorder.start();
  tiny_step(w);
  recorder.stop();
  const std::string html_path = "test_recorder_report.html", trace_path = "test_recorder_trace.json";
  write_memory_report_html(html_path, recorder, "tiny step", memory_summary(kCPU));
  const std::string html = read_file(html_path);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("<polygon") != std::string::npos);
  CHECK(html.find("peak") != std::string::npos);
  CHECK(html.find("activation") != std::string::npos);
  CHECK(html.find("tanh") != std::string::npos);
  CHECK(html.find("reserved") != std::string::npos);
  write_memory_trace_json(trace_path, recorder);
  const auto trace = nlohmann::json::parse(read_file(trace_path));
  REQUIRE(trace.contains("traceEvents"));
  int counters = 0, slices = 0;
  for (const auto& e : trace["traceEvents"]) {
    counters += e["ph"] == "C";
    slices += e["ph"] == "X";
  }
  CHECK(counters >= 2);
  CHECK(slices >= 2);
  std::remove(html_path.c_str());
  std::remove(trace_path.c_str());
  test::expect_error_contains([&] { write_memory_trace_json("/nonexistent-dir/x.json", recorder); },
                              {"/nonexistent-dir/x.json"});
}

TEST_CASE("a recorded run survives the file --memory-json writes, and a bad file names the field", "[recorder]") {
  test::TempDir dir;
  Tensor w = randn({128, 256}).requires_grad_();
  MemoryRecorder recorder(kCPU);
  recorder.start();
  tiny_step(w);
  recorder.stop();
  const MemoryRun run = memory_run_from(recorder, "tiny <step>", {{"model", "tiny"}, {"ms_per_step", 1.5}});
  const std::string path = dir.file("run.json");
  save_memory_run(path, run);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  const MemoryRun back = load_memory_run(path);
  CHECK(back.title == run.title);
  CHECK(back.device == "cpu");
  CHECK(back.facts["ms_per_step"].get<double>() == 1.5);
  REQUIRE(back.samples.size() == run.samples.size());
  for (size_t i = 0; i < run.samples.size(); ++i) {
    CHECK(back.samples[i].allocated == run.samples[i].allocated);
    CHECK(back.samples[i].reserved == run.samples[i].reserved);
    CHECK(back.samples[i].phase == run.samples[i].phase);
    CHECK(back.samples[i].by_category == run.samples[i].by_category);
  }
  CHECK(back.peak.allocated == recorder.peak().allocated);
  CHECK(back.peak_by_category()[static_cast<size_t>(MemoryCategory::activation)] > 0);

  // Two runs on one page; the table has a row per category either run used, and the time.
  const std::string html_path = dir.file("compare.html");
  write_memory_compare_html(html_path, run, back);
  const std::string html = read_file(html_path);
  CHECK(html.find("tiny &lt;step&gt;") != std::string::npos);
  size_t pictures = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++pictures;
  CHECK(pictures == 2);
  const std::vector<RunDifference> rows = run_differences(run, back);
  CHECK(rows.back().what == "time per step");
  for (const RunDifference& d : rows) CHECK(d.a == d.b);

  const nlohmann::json good = nlohmann::json::parse(read_file(path));
  auto rejected = [&](const std::string& text, const std::vector<std::string>& fragments) {
    const std::string bad = dir.file("bad.json");
    std::ofstream(bad) << text;
    std::vector<std::string> expected{bad};
    expected.insert(expected.end(), fragments.begin(), fragments.end());
    test::expect_error_contains([&] { load_memory_run(bad); }, expected);
  };
  rejected("{\"traceEvents\": []}", {"Chrome-trace", "save_memory_run"});
  rejected("not json", {"not JSON"});
  rejected(std::string(100, '[') + std::string(100, ']'), {"nests deeper"});
  nlohmann::json edit = good;
  edit["samples"][3].erase(edit["samples"][3].begin());
  rejected(edit.dump(), {"samples[3]", "array of 13 numbers"});
  edit = good;
  edit["samples"][1][3] = -5;
  rejected(edit.dump(), {"samples[1][3] (allocated)", ">= 0"});
  edit = good;
  edit["categories"][0] = "mystery";
  rejected(edit.dump(), {"categories[0]"});
  edit = good;
  edit["version"] = 99;
  rejected(edit.dump(), {"version"});
  edit = good;
  edit.erase("peak");
  rejected(edit.dump(), {"'peak' is missing"});
  test::expect_error_contains([&] { load_memory_run(dir.file("absent.json")); }, {"absent.json"});
  // A save that cannot finish leaves the last good file.
  std::filesystem::create_directory(path + ".tmp");
  MemoryRun other = run;
  other.title = "other";
  test::expect_error_contains([&] { save_memory_run(path, other); }, {path + ".tmp"});
  CHECK(load_memory_run(path).title == run.title);
}
