#pragma once
// An aligned text table whose rows can also be emitted as JSON objects, so a
// command prints the same numbers for people and for scripts (--json).
//
//   ember::apps::ReportTable table({{"epoch", "epoch", 5, 0}, {"loss", "loss", 8, 4}, {"acc", "acc %", 7, 2}});
//   std::cout << table.header();                            // "epoch      loss    acc %\n-----..."
//   std::cout << table.add_row({int64_t{1}, 0.4321, 97.5});  // "    1    0.4321    97.50\n"
//   nlohmann::ordered_json rows = table.json();              // [{"epoch": 1, "loss": 0.4321, "acc": 97.5}]
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace ember::apps {

struct Column {
  std::string key;    // JSON key
  std::string title;  // text header
  int width = 10;     // minimum text width (grows to fit the title)
  int precision = 3;  // digits after the point for doubles
};

using Cell = std::variant<int64_t, double, std::string>;

class ReportTable {
 public:
  explicit ReportTable(std::vector<Column> columns);

  // Titles right-aligned over their columns, then a rule.
  std::string header() const;
  // Stores the row and returns it formatted (with '\n'); throws if the cell count is wrong.
  std::string add_row(std::vector<Cell> cells);
  std::string format_row(const std::vector<Cell>& cells) const;
  // Every stored row as an object keyed by Column::key, in column order.
  nlohmann::ordered_json json() const;
  // header() followed by every stored row.
  std::string str() const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

}  // namespace ember::apps
