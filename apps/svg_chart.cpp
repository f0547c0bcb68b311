#include "apps/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "memory/timeline_svg.h"

namespace ember::apps {

namespace {
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#59a14f",
                                    "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
constexpr double kWidth = 720, kHeight = 360;                          // before the legend
constexpr double kLeft = 70, kRight = 700, kTop = 40, kBottom = 310;  // the plot area

// About `digits` significant digits without trailing zeros: "12.5", "100", "0.25".
std::string fmt(double v, int digits = 3) {
  if (v == 0 || !std::isfinite(v)) return "0";
  const int mag = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  char buf[64];
  if (mag >= 9 || mag < -6) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(digits - 1 - mag, 0, 9), v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

// A coordinate, to a tenth of a pixel.
std::string px(double v) { return fmt(std::round(v * 10) / 10, 12); }

// The smallest {1, 2, 2.5, 5} x 10^k that is >= v (v > 0).
double nice_up(double v) {
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0}) if (m * p >= v * (1 - 1e-9)) return m * p;
  return 10 * p;
}

void text(std::ostream& os, double x, double y, const std::string& body, const char* anchor = "middle",
          const std::string& attrs = "") {
  os << "<text x='" << px(x) << "' y='" << px(y) << "' text-anchor='" << anchor << "'" << attrs << '>' << html_escape(body)
     << "</text>\n";
}

void line(std::ostream& os, double x1, double y1, double x2, double y2, const std::string& attrs) {
  os << "<line x1='" << px(x1) << "' y1='" << px(y1) << "' x2='" << px(x2) << "' y2='" << px(y2) << "' " << attrs
     << "/>\n";
}

struct Axis {
  double lo = 0, hi = 1;  // exponents of two on a log2 axis
  bool log2 = false;
  std::vector<std::pair<double, std::string>> ticks;  // position in axis units, label
  double at(double v) const { return (log2 ? std::log2(v) - lo : v - lo) / (hi - lo); }  // 0..1
};

// From 0 to a nice maximum, 4 or 5 steps.
Axis value_axis(double max) {
  Axis a;
  a.hi = max > 0 && std::isfinite(max) ? nice_up(max) : 1.0;
  const double mantissa = a.hi / std::pow(10.0, std::floor(std::log10(a.hi)));
  const int steps = std::fabs(mantissa - 2) < 1e-9 ? 4 : 5;
  for (int i = 0; i <= steps; ++i) a.ticks.push_back({a.hi * i / steps, fmt(a.hi * i / steps, 6)});
  return a;
}

Axis linear_axis(double lo, double hi) {
  if (hi - lo <= 0) {  // one x value: centre it
    const double pad = lo != 0 ? std::fabs(lo) * 0.5 : 1.0;
    lo -= pad, hi += pad;
  }
  Axis a;
  const double step = nice_up((hi - lo) / 5);
  a.lo = std::floor(lo / step + 1e-9) * step;
  a.hi = std::ceil(hi / step - 1e-9) * step;
  const int n = static_cast<int>(std::lround((a.hi - a.lo) / step));
  for (int i = 0; i <= n; ++i) a.ticks.push_back({a.lo + i * step, fmt(a.lo + i * step, 6)});
  return a;
}

Axis log2_axis(double lo, double hi) {
  Axis a;
  a.log2 = true;
  a.lo = std::floor(std::log2(lo) + 1e-9);
  a.hi = std::ceil(std::log2(hi) - 1e-9);
  if (a.hi == a.lo) a.lo -= 1, a.hi += 1;
  const int every = static_cast<int>((a.hi - a.lo) / 12) + 1;  // keep the labels apart
  for (double e = a.lo; e <= a.hi; e += every) a.ticks.push_back({std::exp2(e), fmt(std::exp2(e), 12)});
  return a;
}

double to_px_x(const Axis& a, double v) { return kLeft + a.at(v) * (kRight - kLeft); }
double to_px_y(const Axis& a, double v) { return kBottom - a.at(v) * (kBottom - kTop); }

using Legend = std::vector<std::pair<std::string, std::string>>;  // name, colour

// The picture: `body` under the title, then the legend in rows below `height`.
std::string svg(const std::string& title, const std::string& body, const Legend& legend, double height = kHeight) {
  std::ostringstream keys;
  double x = kLeft, y = height + 14;
  for (const auto& [name, color] : legend) {
    const double w = 36 + 7.0 * name.size();  // swatch, text at ~7 px a character, gap
    if (x + w > kRight && x > kLeft) x = kLeft, y += 20;
    keys << "<rect x='" << px(x) << "' y='" << px(y - 10) << "' width='12' height='12' fill='" << html_escape(color)
         << "'/>\n";
    text(keys, x + 18, y, name, "start");
    x += w;
  }
  if (!legend.empty()) height = y + 10;
  std::ostringstream os;
  os << "<svg xmlns='http://www.w3.org/2000/svg' width='" << kWidth << "' height='" << px(height)
     << "' viewBox='0 0 " << kWidth << ' ' << px(height) << "' font-family='sans-serif' font-size='12'>\n"
     << "<rect width='100%' height='100%' fill='white'/>\n";
  if (!title.empty()) text(os, kWidth / 2, 24, title, "middle", " font-size='16' font-weight='bold'");
  os << body << keys.str() << "</svg>\n";
  return os.str();
}

std::string no_data(const std::string& title) {
  std::ostringstream os;
  text(os, kWidth / 2, 64, "no data", "middle", " fill='#888'");
  return svg(title, os.str(), {}, 90);
}

// Grid lines, tick labels, the y axis label and the axis lines.
void draw_frame(std::ostringstream& os, const Axis& y, const std::string& y_label) {
  for (const auto& [v, label] : y.ticks) {
    line(os, kLeft, to_px_y(y, v), kRight, to_px_y(y, v), "stroke='#e0e0e0'");
    text(os, kLeft - 6, to_px_y(y, v) + 4, label, "end", " fill='#444'");
  }
  if (!y_label.empty()) text(os, 16, (kTop + kBottom) / 2, y_label, "middle", " transform='rotate(-90 16 175)'");
  os << "<path d='M" << kLeft << ' ' << kTop << "V" << kBottom << "H" << kRight << "' fill='none' stroke='#444'/>\n";
}

double clamp0(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }
}  // namespace

LinearFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::invalid_argument("fit_line: x and y differ in length");
  if (x.size() < 2) throw std::invalid_argument("fit_line: needs at least 2 points");
  if (std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; }))
    throw std::invalid_argument("fit_line: all x are equal");
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= n, my /= n;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i)
    sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my), syy += (y[i] - my) * (y[i] - my);
  // Constant y: the mean may be off by rounding, which would make r2 noise over noise.
  if (std::all_of(y.begin(), y.end(), [&](double v) { return v == y[0]; })) return {y[0], 0.0, 1.0};
  const double slope = sxy / sxx;
  return {my - slope * mx, slope, sxy * sxy / (sxx * syy)};  // r2 = 1 - residual / total sum of squares
}

std::string line_chart_svg(const LineChart& chart) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<std::pair<double, double>>> pts(chart.series.size());
  double xmin = inf, xmax = -inf, ymax = 0;
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const ChartSeries& series = chart.series[s];
    for (size_t i = 0; i < std::min(series.x.size(), series.y.size()); ++i) {
      const double x = series.x[i], y = series.y[i];
      if (!std::isfinite(x) || std::isnan(y) || (chart.log2_x && x <= 0)) continue;
      pts[s].push_back({x, y});  // drawn at clamp0(y), shown as y
      xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymax = std::max(ymax, clamp0(y));
    }
  }
  if (xmin > xmax) return no_data(chart.title);
  for (const auto& mark : chart.y_marks) ymax = std::max(ymax, clamp0(mark.first));
  const Axis xa = chart.log2_x ? log2_axis(xmin, xmax) : linear_axis(xmin, xmax);
  const Axis ya = value_axis(ymax);

  Legend legend;
  std::vector<std::string> colors;
  size_t next = 0;
  for (const ChartSeries& series : chart.series) {
    colors.push_back(series.color.empty() ? kPalette[next++ % kPaletteSize] : series.color);
    if (!series.name.empty()) legend.push_back({series.name, colors.back()});
  }
  std::ostringstream os;
  draw_frame(os, ya, chart.y_label);
  for (const auto& [v, label] : xa.ticks) {
    line(os, to_px_x(xa, v), kBottom, to_px_x(xa, v), kBottom + 5, "stroke='#444'");
    text(os, to_px_x(xa, v), kBottom + 18, label, "middle", " fill='#444'");
  }
  if (!chart.x_label.empty()) text(os, (kLeft + kRight) / 2, kBottom + 40, chart.x_label);
  for (const auto& [v, label] : chart.y_marks) {
    if (std::isnan(v)) continue;
    line(os, kLeft, to_px_y(ya, clamp0(v)), kRight, to_px_y(ya, clamp0(v)), "stroke='#555' stroke-dasharray='4 3'");
    text(os, kRight - 4, to_px_y(ya, clamp0(v)) - 4, label, "end", " fill='#555'");
  }
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const ChartSeries& series = chart.series[s];
    const std::string color = html_escape(colors[s]);
    if (series.line && pts[s].size() > 1) {
      os << "<polyline fill='none' stroke='" << color << "' stroke-width='2'"
         << (series.dashed ? " stroke-dasharray='6 4'" : "") << " points='";
      for (const auto& [x, y] : pts[s]) os << px(to_px_x(xa, x)) << ',' << px(to_px_y(ya, clamp0(y))) << ' ';
      os << "'/>\n";
    }
    if (!series.points) continue;
    for (const auto& [x, y] : pts[s])
      os << "<circle cx='" << px(to_px_x(xa, x)) << "' cy='" << px(to_px_y(ya, clamp0(y))) << "' r='3.5' fill='"
         << color << "'><title>" << html_escape(series.name) << (series.name.empty() ? "" : ": ") << "x=" << fmt(x, 6)
         << ", y=" << fmt(y, 6) << "</title></circle>\n";
  }
  return svg(chart.title, os.str(), legend);
}

std::string bar_chart_svg(const BarChart& chart) {
  size_t keys = chart.keys.size();
  for (const BarGroup& g : chart.groups) keys = std::max(keys, g.values.size());
  if (chart.groups.empty() || keys == 0) return no_data(chart.title);
  auto value = [&](const BarGroup& g, size_t k) { return k < g.values.size() ? clamp0(g.values[k]) : 0.0; };
  double ymax = 0;
  for (const BarGroup& g : chart.groups) {
    double total = 0;
    for (size_t k = 0; k < keys; ++k) total += value(g, k), ymax = std::max(ymax, value(g, k));
    if (chart.stacked) ymax = std::max(ymax, total);
  }
  const Axis ya = value_axis(ymax);
  Legend legend;
  for (size_t k = 0; k < chart.keys.size(); ++k) legend.push_back({chart.keys[k], kPalette[k % kPaletteSize]});

  std::ostringstream os;
  draw_frame(os, ya, chart.y_label);
  const double band = (kRight - kLeft) / chart.groups.size();
  double below = kHeight;  // slanted group labels may reach under the usual legend position
  const double width = chart.stacked ? std::min(band * 0.6, 80.0) : std::min(band * 0.8, 40.0 * keys);
  auto bar = [&](double x, double w, double v0, double v1, size_t k, const std::string& tip) {
    const double y1 = to_px_y(ya, v1), y0 = to_px_y(ya, v0);
    os << "<rect x='" << px(x) << "' y='" << px(y1) << "' width='" << px(w) << "' height='" << px(y0 - y1)
       << "' fill='" << kPalette[k % kPaletteSize] << "'><title>" << html_escape(tip) << "</title></rect>\n";
  };
  auto value_text = [&](double x, double v, int size) {
    text(os, x, to_px_y(ya, v) - 4, fmt(v), "middle", " font-size='" + std::to_string(size) + "'");
  };
  for (size_t g = 0; g < chart.groups.size(); ++g) {
    const BarGroup& group = chart.groups[g];
    const double centre = kLeft + band * (g + 0.5);
    const std::string prefix = group.label.empty() ? "" : group.label + " / ";
    double total = 0;
    for (size_t k = 0; k < keys; ++k) {
      const double v = value(group, k);
      const std::string tip = prefix + (k < chart.keys.size() ? chart.keys[k] + ": " : "") + fmt(v, 6);
      if (chart.stacked) {
        if (v > 0) bar(centre - width / 2, width, total, total + v, k, tip);
        total += v;
      } else {
        const double w = width / keys, x = centre - width / 2 + w * k;
        bar(x + w * 0.05, w * 0.9, 0, v, k, tip);
        value_text(x + w / 2, v, 10);
      }
    }
    if (chart.stacked) value_text(centre, total, 11);
    // Labels wider than their band are slanted so neighbours do not overlap.
    const bool slant = 6.5 * group.label.size() > band;
    if (slant) below = std::max(below, kBottom + 24 + 0.5 * 6.5 * group.label.size());
    text(os, centre, kBottom + 18, group.label, slant ? "end" : "middle",
         " fill='#444'" + (slant ? " transform='rotate(-30 " + px(centre) + " " + px(kBottom + 18) + ")'" : ""));
  }
  return svg(chart.title, os.str(), legend, below);
}

}  // namespace ember::apps
