// The `ember` command-line tool: parses the command line and hands each
// subcommand to its function in ember_apps_lib.
#include <CLI/CLI.hpp>
#include <iostream>

#include "apps/train_command.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"ember: train small neural networks in C++/CUDA and see where the memory goes"};
  app.require_subcommand(1);
  ember::apps::TrainOptions train_options;
  CLI::App* train = ember::apps::add_train_command(app, train_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (train->parsed()) return ember::apps::train_command(train_options, std::cout);
  } catch (const ember::Error& e) {
    std::cerr << "ember: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
