#pragma once
// MPI's lifetime in an ember process, without <mpi.h>: started once, by
// dist::init_process_group() (dist/world.h), and finished at exit on the success path only.
//
//   if (dist::built_with_mpi()) dist::start_mpi();   // MPI_Init_thread unless MPI already runs
//
// MPI is initialised with MPI_THREAD_SERIALIZED: any thread may call a process group, one at a
// time (ember's callers, the training step, use one thread). start_mpi() registers MPI_Finalize
// with std::atexit, so it runs when main returns or exit() is called. It does not run when the
// job is ended by dist::abort_job (MPI_Abort) or by an uncaught exception (std::terminate, whose
// handler dist::world() routes to abort_job): MPI_Finalize can block on ranks still waiting in a
// collective, so an error path must end with abort_job, never with `return 1` from main.
// A program that initialised MPI itself keeps it: ember then neither initialises nor finalises.
namespace ember::dist {

// True when ember was built with MPI (EMBER_MPI; docs/distributed.md).
bool built_with_mpi();
// Initialises MPI unless it is running. Throws when ember was built without MPI, when MPI was
// already finalised, or when MPI cannot give MPI_THREAD_SERIALIZED.
void start_mpi();
// Throws "dist: not built with MPI", saying how to build with it.
[[noreturn]] void throw_not_built_with_mpi();
// MPI is initialised and not finalised.
bool mpi_running();
// MPI_Abort(MPI_COMM_WORLD, code): ends every process of the job. Returns only when MPI is not
// running (the caller then ends the process itself).
void abort_mpi_job(int code);

}  // namespace ember::dist
