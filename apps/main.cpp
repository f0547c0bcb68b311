// The `ember` command-line tool: parses the command line and hands the subcommand to
// its function in ember_apps_lib (apps/command_line.h).
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "apps/cli_checks.h"
#include "apps/command_line.h"
#include "apps/flag_words.h"
#include "core/error.h"
#include "dist/abort_job.h"
#include "dist/world.h"

namespace {

// An error ends this process with status 1; in a job of several (mpirun), every process, since
// the others would wait for this one in their next collective.
int fail(const std::string& message) {
  if (ember::dist::is_initialized() && ember::dist::world().size() > 1) ember::dist::abort_job("error: " + message);
  std::cerr << "ember: error: " << message << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  ember::apps::CommandLine cli;
  try {
    cli.app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    return cli.app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Our checks' messages are sentences: "--batch must be a positive integer, got 0".
    std::cerr << ember::apps::cli_error_text(e) << "\nRun with --help for more information.\n";
    return e.get_exit_code();
  }
  try {
    return cli.run(std::cout);
  } catch (const ember::Error& e) {
    return fail(ember::apps::flag_words(e.what()));
  } catch (const std::bad_alloc&) {  // tensors fail with ember::Error; this is other host memory
    return fail("out of host memory outside the tensor allocator (std::bad_alloc); free memory on this machine, "
                "or try a smaller --batch");
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
