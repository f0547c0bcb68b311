// Two recorded runs on one page: what a technique moved, on the same scale.
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "memory/report.h"
#include "memory/stats.h"
#include "memory/timeline_svg.h"

namespace ember {

namespace {

// "convnet, batch 256, fp16, checkpoint none, accum 1": the facts a reader tells runs apart by.
std::string what_ran(const MemoryRun& run) {
  std::ostringstream os;
  const char* separator = "";
  for (const char* key : {"model", "batch", "optimizer", "precision", "checkpoint", "accum"}) {
    if (!run.facts.contains(key)) continue;
    const auto& value = run.facts.at(key);
    os << separator << key << " " << (value.is_string() ? value.get<std::string>() : value.dump());
    separator = ", ";
  }
  return os.str();
}

std::string figure(double value, bool bytes) {
  if (bytes) return format_bytes(static_cast<int64_t>(value));
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << value << " ms";
  return os.str();
}

}  // namespace

std::vector<RunDifference> run_differences(const MemoryRun& a, const MemoryRun& b) {
  std::vector<RunDifference> rows{
      {"peak allocated", static_cast<double>(a.peak.allocated), static_cast<double>(b.peak.allocated)},
      {"peak reserved", static_cast<double>(a.peak_reserved()), static_cast<double>(b.peak_reserved())}};
  const auto own_a = a.peak_by_category(), own_b = b.peak_by_category();
  for (size_t c = 0; c < own_a.size(); ++c) {
    if (own_a[c] == 0 && own_b[c] == 0) continue;
    rows.push_back({std::string(category_name(static_cast<MemoryCategory>(c))) + " (own peak)",
                    static_cast<double>(own_a[c]), static_cast<double>(own_b[c])});
  }
  if (a.facts.contains("ms_per_step") && b.facts.contains("ms_per_step") && a.facts["ms_per_step"].is_number() &&
      b.facts["ms_per_step"].is_number())
    rows.push_back({"time per step", a.facts["ms_per_step"].get<double>(), b.facts["ms_per_step"].get<double>(), false});
  return rows;
}

void write_memory_compare_html(const std::string& path, const MemoryRun& a, const MemoryRun& b) {
  const TimelineScale scale = covering(timeline_scale(a.samples), timeline_scale(b.samples));
  std::ostringstream table;
  table << "<table><tr><th></th><th>a</th><th>b</th><th>b - a</th><th>b / a</th></tr>";
  for (const RunDifference& d : run_differences(a, b)) {
    std::ostringstream ratio;
    ratio.setf(std::ios::fixed);
    ratio.precision(2);
    if (d.a > 0) ratio << d.b / d.a << "x";
    const double delta = d.b - d.a;
    table << "<tr><td>" << html_escape(d.what) << "</td><td class='num'>" << figure(d.a, d.bytes)
          << "</td><td class='num'>" << figure(d.b, d.bytes) << "</td><td class='num'>" << (delta < 0 ? "-" : "+")
          << figure(delta < 0 ? -delta : delta, d.bytes) << "</td><td class='num'>" << ratio.str() << "</td></tr>";
  }
  table << "</table>";

  std::ofstream out(path);
  EMBER_CHECK(out.good(), "memory compare: cannot open '" << path << "' for writing");
  out << "<!doctype html><html><head><meta charset='utf-8'><title>ember memory: " << html_escape(a.title) << " vs "
      << html_escape(b.title) << "</title><style>" << timeline_page_css() << "</style></head><body>\n"
      << "<h1>Memory: two runs</h1>\n<p>Both timelines share one time axis and one byte axis, so a band that is "
         "thinner in b is memory the technique saved and a longer b took more time. Live bytes by category "
         "(stacked), training phases shaded, reserved dashed.</p>\n"
      << table.str() << "\n";
  for (const auto& [label, run] : {std::pair<const char*, const MemoryRun*>{"a", &a}, {"b", &b}})
    out << "<h2>" << label << ": " << html_escape(run->title) << "</h2>\n<p>" << html_escape(what_ran(*run))
        << (what_ran(*run).empty() ? "" : "; ") << "device " << html_escape(run->device) << ", " << run->samples.size()
        << " allocation events, peak " << format_bytes(run->peak.allocated) << " (step " << run->peak.step << ", "
        << phase_name(run->peak.phase) << ").</p>\n"
        << timeline_svg(run->samples, run->peak, scale) << "<p>" << timeline_legend(run->peak) << "</p>\n";
  out << "</body></html>\n";
  EMBER_CHECK(out.good(), "memory compare: writing '" << path << "' failed");
}

}  // namespace ember
