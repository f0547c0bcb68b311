#pragma once
// What the memory lab's experiments (apps/lab_experiments.h) write with: markdown tables,
// numbers as text, MiB, medians, and pictures into the lab folder.
//
//   std::string md = markdown_table({"batch", "peak MiB"}, {{"64", fixed(mib(peak))}});
//   write_picture(setup, "batch-size.svg", line_chart_svg(chart));
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/lab_experiments.h"

namespace ember::apps {

double mib(int64_t bytes);
double ms_since(std::chrono::steady_clock::time_point start);
double median(std::vector<double> values);
std::string fixed(double value, int digits = 2);
// A markdown table: the first column left-aligned, the others right-aligned (numbers).
std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
// Writes `svg` to <setup.out>/<name>; throws naming the file when it cannot.
void write_picture(const LabSetup& setup, const std::string& name, const std::string& svg);

}  // namespace ember::apps
