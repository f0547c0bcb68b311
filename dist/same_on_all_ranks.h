#pragma once
// Refusing, at start, a job whose ranks were given different options: every rank sends its
// (name, value) pairs to every other (two all_gathers), and when any value differs, or a name is
// missing on some rank, every rank throws the same error, naming each such option and its value
// on each rank. Call it on every rank at the same point, before the first step:
//
//   dist::check_same_on_all_ranks({{"--batch", std::to_string(batch)}, {"--model", model}});
//   // every rank throws: "dist: the ranks were not given the same options: --batch is 64 on rank 0
//   //                     and 32 on rank 1 (every rank must be started with the same options)"
//
// Names are what the message shows, so a command line passes its flags' spellings. The values are
// compared as strings: pass them in one canonical form (std::to_string, a parsed and re-printed
// size), so "64" and "064" are not told apart from a real difference by accident.
#include <string>
#include <utility>
#include <vector>

#include "dist/world.h"

namespace ember::dist {

using NamedValues = std::vector<std::pair<std::string, std::string>>;

void check_same_on_all_ranks(const NamedValues& options, ProcessGroup& group = world());
void check_same_on_all_ranks(const std::string& name, const std::string& value, ProcessGroup& group = world());

}  // namespace ember::dist
