#pragma once
// Ending a job of several processes on an error. A rank that throws and returns from main
// would leave the others waiting in their next collective for ever, and MPI_Finalize at its
// exit can wait for them too. abort_job prints the message, with this process's rank, on
// stderr and calls MPI_Abort, which ends every process of the job; mpirun then exits with a
// non-zero status. An error path of a program run by mpirun ends here:
//
//   int main(int argc, char** argv) {
//     try {
//       dist::init_process_group();
//       return run(argc, argv);
//     } catch (const std::exception& e) {
//       dist::abort_job(e.what());   // every rank ends now; prints "ember: rank 1 of 2: ..."
//     }
//   }
//
// dist::world() also routes an exception that escapes main (std::terminate) here, once MPI is
// started (dist/world.h). Without MPI (one process) abort_job prints the message and ends this
// process with status 1. These and the timeout of dist/world.h are the only places in ember
// that end a process.
#include <string>

namespace ember::dist {

[[noreturn]] void abort_job(const std::string& message);

// Makes std::terminate (an uncaught exception) call abort_job with the exception's message.
// dist::init_process_group() installs it when it starts MPI.
void abort_job_on_terminate();

}  // namespace ember::dist
