#include "apps/rank_run.h"

#include <CLI/CLI.hpp>
#include <streambuf>

#include "core/error.h"
#include "dist/launch_environment.h"
#include "dist/same_on_all_ranks.h"
#include "dist/world.h"

namespace ember::apps {

namespace {

class DiscardBuffer final : public std::streambuf {
 protected:
  int overflow(int c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// The flags as given on this rank: "--batch" -> "64", flags not given -> "(default)".
dist::NamedValues given_flags(const CLI::App& command) {
  dist::NamedValues flags;
  for (const CLI::Option* option : command.get_options()) {
    const std::string name = option->get_name();
    if (name == "--help") continue;
    std::string value = option->count() == 0 ? "(default)" : "";
    for (const std::string& result : option->results()) value += (value.empty() ? "" : " ") + result;
    flags.emplace_back(name, value);
  }
  return flags;
}

}  // namespace

std::ostream& RankRun::shown(std::ostream& out) const {
  static DiscardBuffer discard;
  static std::ostream sink(&discard);
  return prints() ? out : sink;
}

RankRun start_rank_run(int zero) {
  dist::ProcessGroup& world = dist::init_process_group();
  RankRun run;
  run.rank = world.rank();
  run.ranks = world.size();
  if (world.size() > 1 || zero > 0) run.group = &world;
  return run;
}

std::string rank_path(const std::string& path, int rank) {
  if (rank == 0 || path.empty()) return path;
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  const std::string tag = ".rank" + std::to_string(rank);
  return has_extension ? path.substr(0, dot) + tag + path.substr(dot) : path + tag;
}

MemoryOptions rank_memory_options(MemoryOptions m, int rank) {
  m.report_path = rank_path(m.report_path, rank);
  m.trace_path = rank_path(m.trace_path, rank);
  m.run_path = rank_path(m.run_path, rank);
  return m;
}

void check_command_for_ranks(const CLI::App& parsed) {
  const dist::LaunchEnvironment env = dist::read_launch_environment();
  if (env.size <= 1) return;
  const std::string name = parsed.get_name();
  EMBER_CHECK(name == "train" || name == "bench-train",
              "ember " << name << " runs in one process, but " << env.variables << " started it as one of "
                       << env.size << ": only train and bench-train run data-parallel under mpirun");
  dist::check_same_on_all_ranks(given_flags(parsed), dist::init_process_group());
}

}  // namespace ember::apps
