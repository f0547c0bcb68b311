#pragma once
// The job's process group, made once from the launcher's environment (dist/launch_environment.h):
//
//   $ mpirun -np 2 ./train            # (as root, Open MPI also wants --allow-run-as-root)
//
//   dist::ProcessGroup& world = dist::init_process_group();   // or dist::world(), which calls it
//   std::cout << "rank " << world.rank() << " of " << world.size() << " (" << world.backend_name() << ")\n";
//
// Started by an MPI launcher (mpirun, mpiexec, srun with PMI), it starts MPI (dist/mpi_runtime.h:
// MPI_Init_thread with MPI_THREAD_SERIALIZED, MPI_Finalize at a normal exit) and the group is MPI's
// (dist/mpi_process_group.h: MPI for CPU tensors, NCCL for CUDA tensors when built with it); an
// exception that escapes main then ends the whole job through dist::abort_job. Started any other
// way, or with torchrun's WORLD_SIZE=1, it is dist::SingleProcessGroup: rank 0 of 1. torchrun's
// variables with WORLD_SIZE > 1 are refused (MPI cannot be started from them: use mpirun), and so
// is an MPI launcher's job of several processes in a build without MPI ("not built with MPI").
#include "dist/process_group.h"

namespace ember::dist {

struct InitOptions {
  // Seconds a rank waits in an MPI collective for the others before it ends the job
  // (dist::abort_job) naming the collective; 0 waits for ever. -1: the environment's
  // EMBER_DIST_TIMEOUT (whole seconds), else 0. CUDA tensors' collectives (NCCL) have no timeout.
  int timeout_seconds = -1;
};

// Makes the group on the first call; later calls return it (an explicit timeout that differs from
// the group's throws).
ProcessGroup& init_process_group(const InitOptions& options = {});
// init_process_group() with the default options, on first use.
ProcessGroup& world();
// True once init_process_group() has made the group.
bool is_initialized();

}  // namespace ember::dist
