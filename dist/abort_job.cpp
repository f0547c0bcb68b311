#include "dist/abort_job.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "dist/mpi_runtime.h"
#include "dist/world.h"

namespace ember::dist {

void abort_job(const std::string& message) {
  // A second error while ending (a destructor's, another thread's) must not print or abort again.
  static std::atomic<bool> ending{false};
  if (ending.exchange(true)) std::_Exit(1);
  std::string who = "ember";
  if (is_initialized()) {
    const ProcessGroup& group = world();
    who += ": rank " + std::to_string(group.rank()) + " of " + std::to_string(group.size());
  }
  std::cout.flush();
  std::cerr << who << ": " << message << "\n";
  if (mpi_running()) std::cerr << who << ": ending the job (MPI_Abort)\n";
  std::cerr.flush();
  std::fflush(nullptr);
  abort_mpi_job(1);
  std::_Exit(1);  // MPI is not running: this process is the job
}

namespace {
[[noreturn]] void abort_job_from_terminate() {
  std::string what = "std::terminate was called without an exception";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = std::string("uncaught exception: ") + x.what();
    } catch (...) {
      what = "uncaught exception of a type that is not std::exception";
    }
  }
  abort_job(what);
}
}  // namespace

void abort_job_on_terminate() { std::set_terminate(abort_job_from_terminate); }

}  // namespace ember::dist
