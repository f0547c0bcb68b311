#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "apps/svg_chart.h"

using namespace ember::apps;

namespace {
bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A finished picture with no NaN or infinity among its numbers.
void check_svg(const std::string& svg) {
  CHECK(starts_with(svg, "<svg"));
  CHECK(contains(svg, "</svg>"));
  CHECK(contains(svg, "font-family='sans-serif'"));
  CHECK_FALSE(contains(svg, "nan"));
  CHECK_FALSE(contains(svg, "inf"));
  CHECK_FALSE(contains(svg, "<script"));
}

ChartSeries series(const std::string& name, std::vector<double> x, std::vector<double> y) {
  ChartSeries s;
  s.name = name;
  s.x = std::move(x);
  s.y = std::move(y);
  return s;
}
}  // namespace

TEST_CASE("fit_line recovers an exact line", "[chart]") {
  const LinearFit fit = fit_line({1, 2, 3, 4, 5}, {3.5, 5.5, 7.5, 9.5, 11.5});
  CHECK(fit.slope == Approx(2.0).margin(1e-12));
  CHECK(fit.intercept == Approx(1.5).margin(1e-12));
  CHECK(std::fabs(fit.r2 - 1.0) <= 1e-12);

  const LinearFit flat = fit_line({8, 16, 32}, {0.1, 0.1, 0.1});
  CHECK(flat.slope == 0.0);
  CHECK(flat.intercept == Approx(0.1));
  CHECK(flat.r2 == 1.0);
}

TEST_CASE("fit_line on noisy data", "[chart]") {
  std::vector<double> x, y;
  for (int i = 0; i < 50; ++i) {
    x.push_back(i);
    y.push_back(10.0 + 0.5 * i + (i % 2 == 0 ? 0.3 : -0.3));  // alternating noise
  }
  const LinearFit fit = fit_line(x, y);
  CHECK(fit.slope == Approx(0.5).margin(0.02));
  CHECK(fit.intercept == Approx(10.0).margin(0.5));
  CHECK(fit.r2 > 0.98);
  CHECK(fit.r2 < 1.0);
}

TEST_CASE("fit_line rejects bad input", "[chart]") {
  CHECK_THROWS_AS(fit_line({1, 2, 3}, {1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(fit_line({1}, {1}), std::invalid_argument);
  CHECK_THROWS_AS(fit_line({}, {}), std::invalid_argument);
  CHECK_THROWS_AS(fit_line({4, 4, 4}, {1, 2, 3}), std::invalid_argument);
}

TEST_CASE("line_chart_svg draws every series with its name", "[chart]") {
  LineChart chart;
  chart.title = "peak memory";
  chart.x_label = "batch";
  chart.y_label = "MiB";
  chart.log2_x = true;
  chart.series = {series("convnet", {8, 64, 512}, {20, 61, 410}), series("lenet5", {8, 64, 512}, {2, 5, 30})};
  chart.series[1].dashed = true;
  chart.y_marks = {{256, "budget"}};
  const std::string svg = line_chart_svg(chart);
  check_svg(svg);
  CHECK(contains(svg, "peak memory"));
  CHECK(contains(svg, "convnet"));
  CHECK(contains(svg, "lenet5"));
  CHECK(contains(svg, "budget"));
  CHECK(contains(svg, ">512</text>"));                       // a log2 tick
  CHECK(contains(svg, "<title>convnet: x=64, y=61</title>"));  // a point's tooltip
  CHECK(contains(svg, "#4e79a7"));
  CHECK(contains(svg, "#f28e2b"));
  CHECK(contains(svg, "stroke-dasharray"));
}

TEST_CASE("line_chart_svg with one point, equal values, NaN or nothing", "[chart]") {
  LineChart one;
  one.title = "one";
  one.series = {series("p", {64}, {7})};
  check_svg(line_chart_svg(one));
  one.log2_x = true;
  check_svg(line_chart_svg(one));

  LineChart flat;
  flat.series = {series("zeros", {3, 3, 3}, {0, 0, 0}), series("gap", {1, 2}, {std::nan(""), -5})};
  check_svg(line_chart_svg(flat));

  LineChart empty;
  empty.title = "nothing yet";
  const std::string svg = line_chart_svg(empty);
  check_svg(svg);
  CHECK(contains(svg, "no data"));
  CHECK(contains(svg, "nothing yet"));

  LineChart unusable;  // nothing drawable on a log2 axis
  unusable.log2_x = true;
  unusable.series = {series("s", {0, -1}, {1, 2})};
  CHECK(contains(line_chart_svg(unusable), "no data"));
}

TEST_CASE("chart text is escaped for XML", "[chart]") {
  LineChart chart;
  chart.title = "a <&> b";
  chart.series = {series("x<y & z", {1, 2}, {1, 2})};
  const std::string svg = line_chart_svg(chart);
  check_svg(svg);
  CHECK(contains(svg, "a &lt;&amp;&gt; b"));
  CHECK(contains(svg, "x&lt;y &amp; z"));
  CHECK_FALSE(contains(svg, "<&>"));
  CHECK_FALSE(contains(svg, "x<y"));

  BarChart bars;
  bars.title = "<&>";
  bars.keys = {"k"};
  bars.groups = {{"g<1>", {1}}};
  const std::string bar_svg = bar_chart_svg(bars);
  CHECK(contains(bar_svg, "&lt;&amp;&gt;"));
  CHECK(contains(bar_svg, "g&lt;1&gt;"));
}

TEST_CASE("bar_chart_svg prints the totals of stacked bars", "[chart]") {
  BarChart chart;
  chart.title = "memory by category";
  chart.y_label = "MiB";
  chart.keys = {"parameter", "activation", "optimizer"};
  chart.groups = {{"convnet", {1.5, 10, 1}}, {"lenet5", {0.25, 2, 0.25}}};
  std::string svg = bar_chart_svg(chart);
  check_svg(svg);
  CHECK(contains(svg, ">12.5</text>"));  // 1.5 + 10 + 1
  CHECK(contains(svg, ">2.5</text>"));
  CHECK(contains(svg, "<title>convnet / activation: 10</title>"));
  CHECK(contains(svg, "parameter"));
  CHECK(contains(svg, "lenet5"));

  chart.stacked = false;
  svg = bar_chart_svg(chart);
  check_svg(svg);
  CHECK(contains(svg, ">1.5</text>"));
  CHECK(contains(svg, ">0.25</text>"));
  CHECK_FALSE(contains(svg, ">12.5</text>"));

  BarChart empty;
  svg = bar_chart_svg(empty);
  check_svg(svg);
  CHECK(contains(svg, "no data"));
}
