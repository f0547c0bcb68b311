// The HTML memory report: the timeline picture (memory/timeline_svg.h), the largest
// allocations at the peak and the statistics, in one page with no dependencies.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "memory/report.h"
#include "memory/stats.h"
#include "memory/scopes.h"
#include "memory/timeline_svg.h"

namespace ember {

void write_memory_report_html(const std::string& path, const MemoryRecorder& recorder, const std::string& title,
                              const std::string& summary_table) {
  const std::vector<MemoryRecorder::Sample> all = recorder.samples();
  const MemoryRecorder::Sample& peak = recorder.peak();
  std::ostringstream table;
  table << "<table><tr><th>#</th><th>op</th><th>shape</th><th>category</th><th>phase</th><th>bytes</th></tr>";
  int rank = 0;
  for (const auto& a : recorder.largest_at_peak())
    table << "<tr><td>" << ++rank << "</td><td>" << html_escape(a.op.empty() ? "(unnamed)" : a.op) << "</td><td>"
          << html_escape(a.shape) << "</td><td>" << category_name(a.category) << "</td><td>" << phase_name(a.phase)
          << "</td><td class='num'>" << format_bytes(a.bytes) << "</td></tr>";
  table << "</table>";

  std::ofstream out(path);
  EMBER_CHECK(out.good(), "memory report: cannot open '" << path << "' for writing");
  out << "<!doctype html><html><head><meta charset='utf-8'><title>ember memory: " << html_escape(title)
      << "</title><style>" << timeline_page_css() << "</style></head><body>\n<h1>Memory: " << html_escape(title) << "</h1>\n<p>Device " << recorder.device()
      << ". Live bytes by category over time (stacked), training phases shaded, the allocator's reserved "
         "bytes dashed. " << all.size() << " allocation events; peak allocated "
      << format_bytes(peak.allocated) << ", reserved then " << format_bytes(peak.reserved) << ".</p>\n"
      << timeline_svg(all, peak, timeline_scale(all)) << "<p>" << timeline_legend(peak) << "</p>\n<h2>Ten largest live allocations at the peak</h2>\n"
      << table.str() << "\n<h2>Statistics</h2>\n<pre>" << html_escape(summary_table) << "</pre>\n</body></html>\n";
  EMBER_CHECK(out.good(), "memory report: writing '" << path << "' failed");
}

}  // namespace ember
