#include "apps/compare_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "apps/output_path.h"
#include "apps/report_table.h"
#include "memory/memory_run.h"
#include "memory/report.h"

namespace ember::apps {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}  // namespace

CLI::App* add_compare_command(CLI::App& app, CompareOptions& o) {
  CLI::App* cmd = app.add_subcommand("compare", "Draw two runs' memory (files from --memory-json) on one scale");
  cmd->add_option("a", o.a, "The first run's --memory-json file")->required();
  cmd->add_option("b", o.b, "The second run's --memory-json file")->required();
  cmd->add_option("-o,--output", o.output, "The HTML page to write")->capture_default_str();
  cmd->add_flag("--json", o.json, "Print the table as JSON");
  return cmd;
}

nlohmann::ordered_json compare_command(const CompareOptions& o, std::ostream& out) {
  check_writable(o.output, "--output");
  const MemoryRun a = load_memory_run(o.a), b = load_memory_run(o.b);
  write_memory_compare_html(o.output, a, b);
  ReportTable table({{"what", "", 26, 0}, {"a", "a", 12, 2}, {"b", "b", 12, 2}, {"ratio", "b / a", 8, 0},
                     {"unit", "", 4, 0}});
  for (const RunDifference& d : run_differences(a, b)) {
    const double scale = d.bytes ? kMiB : 1.0;
    char ratio[32] = "new";  // a had none
    if (d.a > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", d.b / d.a);
    table.add_row({d.what, d.a / scale, d.b / scale, std::string(ratio), std::string(d.bytes ? "MiB" : "ms")});
  }
  const nlohmann::ordered_json result{{"a", {{"file", o.a}, {"title", a.title}, {"run", a.facts}}},
                                      {"b", {{"file", o.b}, {"title", b.title}, {"run", b.facts}}},
                                      {"rows", table.json()},
                                      {"output", o.output}};
  if (o.json) {
    out << result.dump() << "\n";
    return result;
  }
  out << "a: " << a.title << " (" << o.a << ")\nb: " << b.title << " (" << o.b << ")\n"
      << table.str() << "written to " << o.output << "\n";
  return result;
}

}  // namespace ember::apps
