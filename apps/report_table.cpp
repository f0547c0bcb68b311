#include "apps/report_table.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "core/error.h"

namespace ember::apps {

namespace {
constexpr const char* kColumnGap = "  ";
}

ReportTable::ReportTable(std::vector<Column> columns) : columns_(std::move(columns)) {
  for (Column& c : columns_) c.width = std::max(c.width, static_cast<int>(c.title.size()));
}

std::string ReportTable::header() const {
  std::ostringstream os;
  size_t total = 0;
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (i > 0) os << kColumnGap;
    os << std::setw(columns_[i].width) << columns_[i].title;
    total += static_cast<size_t>(columns_[i].width) + (i > 0 ? 2 : 0);
  }
  os << "\n" << std::string(total, '-') << "\n";
  return os.str();
}

std::string ReportTable::format_row(const std::vector<Cell>& cells) const {
  EMBER_CHECK(cells.size() == columns_.size(),
              "report table: a row has " << cells.size() << " cells for " << columns_.size() << " columns");
  std::ostringstream os;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) os << kColumnGap;
    os << std::setw(columns_[i].width);
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, double>) os << std::fixed << std::setprecision(columns_[i].precision);
          os << v;
        },
        cells[i]);
  }
  os << "\n";
  return os.str();
}

std::string ReportTable::add_row(std::vector<Cell> cells) {
  std::string line = format_row(cells);
  rows_.push_back(std::move(cells));
  return line;
}

nlohmann::ordered_json ReportTable::json() const {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& cells : rows_) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (size_t i = 0; i < cells.size(); ++i)
      std::visit([&](const auto& v) { row[columns_[i].key] = v; }, cells[i]);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string ReportTable::str() const {
  std::string out = header();
  for (const auto& cells : rows_) out += format_row(cells);
  return out;
}

}  // namespace ember::apps
