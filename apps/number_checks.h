#pragma once
// A command-line check CLI11 lacks. Its Range, NonNegativeNumber and PositiveNumber let nan
// through (every comparison with nan is false), so `--min-accuracy nan` was accepted and
// switched the accuracy check off; inf passes wherever no upper bound is given.
//
//   cmd->add_option("--lr", o.lr, "...")->check(CLI::NonNegativeNumber)->check(finite_number());
#include <CLI/CLI.hpp>

namespace ember::apps {

// Accepts a number whose value as a double is finite: rejects nan, inf and what overflows (1e400).
CLI::Validator finite_number();

}  // namespace ember::apps
