#include "apps/lab_report.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace ember::apps {

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

std::string fixed(double value, int digits) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << value;
  return os.str();
}

std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::ostringstream os;
  for (const std::string& h : header) os << "| " << h << " ";
  os << "|\n";
  for (size_t i = 0; i < header.size(); ++i) os << (i == 0 ? "|---" : "|--:");
  os << "|\n";
  for (const auto& row : rows) {
    for (const std::string& cell : row) os << "| " << cell << " ";
    os << "|\n";
  }
  return os.str();
}

void write_picture(const LabSetup& setup, const std::string& name, const std::string& svg) {
  const std::string path = setup.out + "/" + name;
  std::ofstream out(path);
  EMBER_CHECK(out.good(), "ember lab: cannot write '" << path << "'");
  out << svg;
  EMBER_CHECK(out.good(), "ember lab: writing '" << path << "' failed");
}

}  // namespace ember::apps
