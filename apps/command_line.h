#pragma once
// The `ember` command line: every subcommand registered on one CLI11 app, and the
// call that runs the one that was parsed. main.cpp and the tests share it.
//
//   ember::apps::CommandLine cli;
//   cli.app.parse(argc, argv);         // throws CLI::ParseError (cli_error_text says it well)
//   return cli.run(std::cout);         // the parsed subcommand's exit code
#include <ostream>

#include <CLI/CLI.hpp>

#include "apps/bench_train_command.h"
#include "apps/compare_command.h"
#include "apps/eval_command.h"
#include "apps/lab_command.h"
#include "apps/plan_command.h"
#include "apps/train_command.h"

namespace ember::apps {

struct CommandLine {
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // Runs the parsed subcommand; ember::Error propagates to the caller.
  int run(std::ostream& out);

  CLI::App app{"ember: train small neural networks in C++/CUDA and see where the memory goes"};
  TrainOptions train_options;
  EvalOptions eval_options;
  BenchTrainOptions bench_options;
  PlanOptions plan_options;
  CompareOptions compare_options;
  LabOptions lab_options;
  CLI::App* train = nullptr;
  CLI::App* eval = nullptr;
  CLI::App* bench = nullptr;
  CLI::App* plan = nullptr;
  CLI::App* compare = nullptr;
  CLI::App* lab = nullptr;
};

}  // namespace ember::apps
