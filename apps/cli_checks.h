#pragma once
// The command line's value checks, each failure a sentence a person can act on:
//
//   cmd->add_option("--batch", o.batch, "Mini-batch size")->check(apps::positive_integer());
//   // ember train --batch 0   ->  "--batch must be a positive integer, got 0"
//
// They read the text themselves (before CLI11 converts it), so `--batch abc`,
// `--batch 1.5`, `--batch 1e9` and a number too large for the option say the same kind
// of sentence instead of a conversion error or a double's range; `--batch 010` is refused
// (CLI11 alone reads it as octal 8). cli_error_text() turns
// CLI11's "--batch: must be ..." into "--batch must be ...".
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ember::apps {

CLI::Validator integer_between(int64_t low, int64_t high, const std::string& what = "an integer");
inline CLI::Validator positive_integer() {
  return integer_between(1, std::numeric_limits<int32_t>::max(), "a positive integer");
}
inline CLI::Validator non_negative_integer() {
  return integer_between(0, std::numeric_limits<int32_t>::max(), "an integer >= 0");
}
// A finite decimal number in [low, high] (inf and nan are refused).
CLI::Validator number_between(double low, double high, const std::string& what = "a number");
inline CLI::Validator non_negative_number() {
  return number_between(0.0, std::numeric_limits<double>::max(), "a number >= 0");
}
inline CLI::Validator fraction() { return number_between(0.0, 1.0, "a number from 0 to 1"); }
CLI::Validator one_of(const std::vector<std::string>& allowed);
// A seed: a whole number from 0 to 2^64 - 1.
CLI::Validator seed_value();

// What to print for a parse error: CLI11's message, with "--flag: must" made "--flag must".
std::string cli_error_text(const CLI::Error& error);

}  // namespace ember::apps
