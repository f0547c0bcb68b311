// The `ember` command-line tool: parses the command line and hands each
// subcommand to its function in ember_apps_lib.
#include <CLI/CLI.hpp>
#include <iostream>

#include "apps/bench_train_command.h"
#include "apps/compare_command.h"
#include "apps/eval_command.h"
#include "apps/lab_command.h"
#include "apps/plan_command.h"
#include "apps/train_command.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"ember: train small neural networks in C++/CUDA and see where the memory goes"};
  app.require_subcommand(1);
  ember::apps::TrainOptions train_options;
  CLI::App* train = ember::apps::add_train_command(app, train_options);
  ember::apps::EvalOptions eval_options;
  CLI::App* eval = ember::apps::add_eval_command(app, eval_options);
  ember::apps::BenchTrainOptions bench_options;
  CLI::App* bench = ember::apps::add_bench_train_command(app, bench_options);
  ember::apps::PlanOptions plan_options;
  CLI::App* plan = ember::apps::add_plan_command(app, plan_options);
  ember::apps::CompareOptions compare_options;
  CLI::App* compare = ember::apps::add_compare_command(app, compare_options);
  ember::apps::LabOptions lab_options;
  CLI::App* lab = ember::apps::add_lab_command(app, lab_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (train->parsed()) return ember::apps::train_command(train_options, std::cout);
    if (eval->parsed()) return ember::apps::eval_command(eval_options, std::cout);
    if (bench->parsed()) {
      ember::apps::bench_train_command(bench_options, std::cout);
      return 0;
    }
    if (plan->parsed()) {
      ember::apps::plan_command(plan_options, std::cout);
      return 0;
    }
    if (lab->parsed()) {
      ember::apps::lab_command(lab_options, std::cout);
      return 0;
    }
    if (compare->parsed()) {
      ember::apps::compare_command(compare_options, std::cout);
      return 0;
    }
  } catch (const ember::Error& e) {
    std::cerr << "ember: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
