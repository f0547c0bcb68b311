#pragma once
// Standalone SVG charts (no JavaScript, fonts or network) for the pictures of markdown
// reports: a line chart with an optional log2 x axis and reference lines, a stacked or
// grouped bar chart, and the least-squares line to draw through measurements.
//
//   using namespace ember::apps;
//   LineChart chart;
//   chart.title = "peak memory", chart.x_label = "batch", chart.y_label = "MiB", chart.log2_x = true;
//   ChartSeries measured;
//   measured.name = "convnet", measured.x = {8, 64, 512}, measured.y = {20, 61, 410};
//   const LinearFit fit = fit_line(measured.x, measured.y);
//   ChartSeries fitted;  // a dashed line without markers
//   fitted.name = "fit", fitted.points = false, fitted.dashed = true, fitted.x = {8, 512};
//   fitted.y = {fit.intercept + fit.slope * 8, fit.intercept + fit.slope * 512};
//   chart.series = {measured, fitted};
//   chart.y_marks = {{256, "budget"}};
//   std::ofstream("peak.svg") << line_chart_svg(chart);   // in markdown: ![](peak.svg)
//
// The y axis starts at 0 (negative values are drawn as 0) and ends at a rounded maximum;
// points that cannot be drawn (NaN, or x <= 0 on a log2 axis) are left out, and a chart
// with nothing to draw is a small picture saying "no data".
#include <string>
#include <utility>
#include <vector>

namespace ember::apps {

struct LinearFit {
  double intercept = 0.0;
  double slope = 0.0;
  double r2 = 0.0;  // coefficient of determination (1 when every point is on the line; 1 also when y is constant and fitted exactly)
};
// Least squares y = intercept + slope * x. Throws std::invalid_argument if sizes differ or there are fewer than 2 points, or all x are equal.
LinearFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

struct ChartSeries {
  std::string name;          // legend entry
  std::vector<double> x, y;  // same length
  bool line = true;          // join the points
  bool points = true;        // draw a marker at each point
  bool dashed = false;       // dashed line (e.g. a fitted line)
  std::string color;         // empty: the palette's next colour
};
struct LineChart {
  std::string title, x_label, y_label;
  std::vector<ChartSeries> series;
  bool log2_x = false;                 // x axis in powers of two (batch sizes 8..512); ticks at the powers of two present
  std::vector<std::pair<double, std::string>> y_marks;  // horizontal reference lines with a label (e.g. a budget)
};
std::string line_chart_svg(const LineChart& chart);

struct BarGroup {
  std::string label;            // under the bar(s)
  std::vector<double> values;   // one per key
};
struct BarChart {
  std::string title, y_label;
  std::vector<std::string> keys;    // legend entries, one colour each
  std::vector<BarGroup> groups;
  bool stacked = true;              // true: one stacked bar per group; false: the keys side by side
};
std::string bar_chart_svg(const BarChart& chart);

}  // namespace ember::apps
