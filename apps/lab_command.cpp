#include "apps/lab_command.h"

#include <omp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <utility>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/lab_experiments.h"
#include "apps/thread_count.h"
#include "core/error.h"

namespace ember::apps {

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

}  // namespace

CLI::App* add_lab_command(CLI::App& app, LabOptions& o) {
  CLI::App* cmd = app.add_subcommand("lab", "Run the memory lab: one measured experiment per memory remedy, "
                                            "written as markdown tables and SVG pictures");
  cmd->add_option("--out", o.out, "Folder to write (README.md and the pictures)")->capture_default_str();
  cmd->add_option("--threads", o.threads, "CPU threads")->check(thread_count())->capture_default_str();
  cmd->add_option("--data-dir", o.data_dir, "Fashion-MNIST folder (default /usr/share/datasets/fashion-mnist)");
  cmd->add_option("--budget-mib", o.budget_mib, "The batch-size experiment's memory budget, MiB")
      ->check(integer_between(8, int64_t{1} << 20, "a whole number of MiB"))
      ->capture_default_str();
  return cmd;
}

std::string lab_command(const LabOptions& o, std::ostream& log) {
  using Clock = std::chrono::steady_clock;
  omp_set_num_threads(o.threads);
  // Before anything is written: a mistyped folder must not leave half a lab behind.
  EMBER_CHECK(o.data_dir.empty() || std::filesystem::is_directory(o.data_dir),
              "ember lab: --data-dir '" << o.data_dir << "' is not a folder");
  std::error_code error;
  std::filesystem::create_directories(o.out, error);
  EMBER_CHECK(!error, "ember lab: cannot create '" << o.out << "': " << error.message());
  const LabSetup setup{o.out, o.threads, o.data_dir, o.budget_mib};
  const std::vector<std::pair<const char*, std::function<std::string(const LabSetup&)>>> experiments{
      {"batch size", lab_batch_size},         {"gradient accumulation", lab_accumulation},
      {"checkpointing", lab_checkpointing},   {"mixed precision", lab_mixed_precision},
      {"releasing cached memory", lab_releasing_memory}, {"data loading", lab_data_loading},
      {"data parallel and ZeRO", lab_data_parallel}};
  const Clock::time_point start = Clock::now();
  std::ostringstream sections;
  for (size_t i = 0; i < experiments.size(); ++i) {
    const Clock::time_point t = Clock::now();
    log << "[" << i + 1 << "/" << experiments.size() << "] " << experiments[i].first << " ... " << std::flush;
    sections << experiments[i].second(setup) << "\n";
    const double seconds = std::chrono::duration<double>(Clock::now() - t).count();
    const double total = std::chrono::duration<double>(Clock::now() - start).count();
    log << static_cast<int>(seconds * 10) / 10.0 << " s (" << static_cast<int>(total) << " s so far)\n";
  }
  const double total = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string path = o.out + "/README.md";
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    EMBER_CHECK(out.good(), "ember lab: cannot write '" << temporary << "'");
    out << "# The memory lab\n\nWritten by `ember lab --out " << o.out << " --threads " << o.threads
        << "` (scripts/memory-lab.sh) on " << today() << ", " << cpu_model() << ", " << o.threads
        << " threads, in " << static_cast<int>(total) << " s. Every table and picture below comes from this one run; "
           "nothing is typed by hand. Memory figures are exact and repeat from run to run; times drift with the "
           "machine (+-30% between runs here). Background: [docs/memory.md](../memory.md).\n\n"
        << sections.str();
    EMBER_CHECK(out.good(), "ember lab: writing '" << temporary << "' failed");
  }
  std::filesystem::rename(temporary, path, error);
  EMBER_CHECK(!error, "ember lab: cannot move '" << temporary << "' to '" << path << "': " << error.message());
  log << "memory lab written to " << path << " in " << static_cast<int>(total) << " s\n";
  return path;
}

}  // namespace ember::apps
