#include "memory/timeline_svg.h"

#include <algorithm>
#include <sstream>

#include "memory/scopes.h"
#include "memory/stats.h"

namespace ember {

namespace {

constexpr double kWidth = 960, kHeight = 380, kLeft = 70, kRight = 20, kTop = 20, kBottom = 40;
constexpr size_t kMaxColumns = 1200;
constexpr double kMiB = 1024.0 * 1024.0;

const char* category_color(int c) {
  static const char* colors[kNumMemoryCategories] = {"#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#76b7b2",
                                                     "#edc948", "#b07aa1", "#9c755f"};
  return colors[c];
}

const char* phase_color(Phase p) {
  switch (p) {
    case Phase::forward: return "#dbe9f6";
    case Phase::backward: return "#fde3cf";
    case Phase::optimizer: return "#d9f0d3";
    case Phase::data: return "#eeeeee";
    default: return "none";
  }
}

// Keeps, per x bucket, the sample with the most allocated bytes.
std::vector<MemoryRecorder::Sample> thin(const std::vector<MemoryRecorder::Sample>& samples) {
  if (samples.size() <= kMaxColumns) return samples;
  std::vector<MemoryRecorder::Sample> out;
  const double span = std::max(samples.back().time_ms - samples.front().time_ms, 1e-9);
  size_t bucket = SIZE_MAX;
  for (const auto& s : samples) {
    const auto b = static_cast<size_t>((s.time_ms - samples.front().time_ms) / span * (kMaxColumns - 1));
    if (b != bucket) {
      out.push_back(s);
      bucket = b;
    } else if (s.allocated > out.back().allocated) {
      out.back() = s;
    }
  }
  return out;
}

}  // namespace

const char* timeline_page_css() {
  return "body{font-family:sans-serif;margin:24px;color:#222}"
         ".key{margin-right:14px;white-space:nowrap}.key i{display:inline-block;width:12px;height:12px;"
         "margin-right:4px;vertical-align:middle}table{border-collapse:collapse;margin:8px 0}"
         "td,th{border:1px solid #ccc;padding:3px 8px}td.num{text-align:right}pre{background:#f6f6f6;padding:8px}";
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '<') out += "&lt;";
    else if (ch == '>') out += "&gt;";
    else if (ch == '&') out += "&amp;";
    else if (ch == '\'') out += "&apos;";
    else if (ch == '"') out += "&quot;";
    else out += ch;
  }
  return out;
}

TimelineScale timeline_scale(const std::vector<MemoryRecorder::Sample>& all) {
  TimelineScale scale;
  if (all.empty()) return scale;
  scale.t0 = all.front().time_ms;
  scale.t1 = std::max(all.back().time_ms, scale.t0 + 1e-3);
  for (const auto& s : all) scale.y_max = std::max({scale.y_max, s.allocated, s.reserved});
  return scale;
}

TimelineScale covering(const TimelineScale& a, const TimelineScale& b) {
  return {std::min(a.t0, b.t0), std::max(a.t1, b.t1), std::max(a.y_max, b.y_max)};
}

std::string timeline_svg(const std::vector<MemoryRecorder::Sample>& all, const MemoryRecorder::Sample& peak,
                         const TimelineScale& scale) {
  const std::vector<MemoryRecorder::Sample> samples = thin(all);
  const double t0 = scale.t0, t1 = scale.t1 > scale.t0 ? scale.t1 : scale.t0 + 1;
  const int64_t y_max = std::max<int64_t>(scale.y_max, 1);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x_of = [&](double t) { return kLeft + (t - t0) / (t1 - t0) * plot_w; };
  auto y_of = [&](double bytes) { return kTop + plot_h - bytes / static_cast<double>(y_max) * plot_h; };

  std::ostringstream svg;
  svg.setf(std::ios::fixed);
  svg.precision(1);
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << kWidth << "' height='" << kHeight
      << "' font-family='sans-serif' font-size='11'>\n";
  // Phase shading: one rectangle per run of samples in the same phase.
  for (size_t i = 0; i < samples.size();) {
    size_t j = i;
    while (j + 1 < samples.size() && samples[j + 1].phase == samples[i].phase) ++j;
    const double xa = x_of(samples[i].time_ms), xb = x_of(j + 1 < samples.size() ? samples[j + 1].time_ms : samples[j].time_ms);
    if (std::string(phase_color(samples[i].phase)) != "none")
      svg << "<rect x='" << xa << "' y='" << kTop << "' width='" << std::max(xb - xa, 0.5) << "' height='" << plot_h
          << "' fill='" << phase_color(samples[i].phase) << "'><title>" << phase_name(samples[i].phase) << ", step "
          << samples[i].step << "</title></rect>\n";
    i = j + 1;
  }
  // Stacked areas, one polygon per category: upper edge left to right, lower edge back.
  for (int c = 0; c < kNumMemoryCategories && !samples.empty(); ++c) {
    std::ostringstream upper, lower;
    upper.setf(std::ios::fixed);
    lower.setf(std::ios::fixed);
    upper.precision(1);
    lower.precision(1);
    for (size_t i = 0; i < samples.size(); ++i) {
      int64_t below = 0;
      for (int k = 0; k < c; ++k) below += samples[i].by_category[static_cast<size_t>(k)];
      const int64_t top = below + samples[i].by_category[static_cast<size_t>(c)];
      upper << x_of(samples[i].time_ms) << "," << y_of(static_cast<double>(top)) << " ";
      const size_t r = samples.size() - 1 - i;
      int64_t below_r = 0;
      for (int k = 0; k < c; ++k) below_r += samples[r].by_category[static_cast<size_t>(k)];
      lower << x_of(samples[r].time_ms) << "," << y_of(static_cast<double>(below_r)) << " ";
    }
    svg << "<polygon points='" << upper.str() << lower.str() << "' fill='" << category_color(c)
        << "' fill-opacity='0.85'><title>" << category_name(static_cast<MemoryCategory>(c)) << "</title></polygon>\n";
  }
  // Reserved (what the allocator holds from the backend) as a dashed line.
  svg << "<polyline fill='none' stroke='#222' stroke-dasharray='5,3' stroke-width='1.2' points='";
  for (const auto& s : samples) svg << x_of(s.time_ms) << "," << y_of(static_cast<double>(s.reserved)) << " ";
  svg << "'/>\n";
  // Axes and ticks.
  svg << "<line x1='" << kLeft << "' y1='" << kTop + plot_h << "' x2='" << kLeft + plot_w << "' y2='" << kTop + plot_h
      << "' stroke='#333'/><line x1='" << kLeft << "' y1='" << kTop << "' x2='" << kLeft << "' y2='" << kTop + plot_h
      << "' stroke='#333'/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double bytes = static_cast<double>(y_max) * i / 5;
    svg << "<text x='" << kLeft - 6 << "' y='" << y_of(bytes) + 4 << "' text-anchor='end'>" << bytes / kMiB
        << " MiB</text>\n";
    const double t = t0 + (t1 - t0) * i / 5;
    const char* anchor = i == 0 ? "start" : (i == 5 ? "end" : "middle");  // keep the end labels inside
    svg << "<text x='" << x_of(t) << "' y='" << kTop + plot_h + 16 << "' text-anchor='" << anchor << "'>" << t
        << " ms</text>\n";
  }
  // The peak.
  if (peak.allocated > 0) {
    const double px = x_of(std::clamp(peak.time_ms, t0, t1));
    svg << "<line x1='" << px << "' y1='" << kTop << "' x2='" << px << "' y2='" << kTop + plot_h
        << "' stroke='#d62728' stroke-width='1.5'/>\n<text x='" << std::min(px + 4, kWidth - 200) << "' y='"
        << kTop + 12 << "' fill='#d62728'>peak " << format_bytes(peak.allocated) << " (step " << peak.step << ", "
        << phase_name(peak.phase) << ")</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string timeline_legend(const MemoryRecorder::Sample& peak) {
  std::ostringstream legend;
  for (int c = 0; c < kNumMemoryCategories; ++c)
    legend << "<span class='key'><i style='background:" << category_color(c) << "'></i>"
           << category_name(static_cast<MemoryCategory>(c)) << " (at peak "
           << format_bytes(peak.by_category[static_cast<size_t>(c)]) << ")</span>";
  legend << "<span class='key'><i style='border-top:2px dashed #222;height:0'></i>reserved</span>";
  for (Phase p : {Phase::forward, Phase::backward, Phase::optimizer, Phase::data})
    legend << "<span class='key'><i style='background:" << phase_color(p) << "'></i>" << phase_name(p) << "</span>";
  return legend.str();
}

}  // namespace ember
