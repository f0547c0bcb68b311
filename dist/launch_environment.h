#pragma once
// What the launcher told this process about the job, read from its environment:
//
//   launcher   variables (rank, size, local rank)
//   Open MPI   OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
//   MPICH      PMI_RANK, PMI_SIZE, MPI_LOCALRANKID        (Hydra's mpiexec, srun --mpi=pmi2)
//   torchrun   RANK, WORLD_SIZE, LOCAL_RANK
//
// dist::init_process_group() (dist/world.h) starts MPI when an MPI launcher started the process,
// and then takes rank and size from MPI itself. torchrun's variables are read so that the error
// can say what to do instead: MPI cannot be started from them, so a job of several processes
// needs an MPI launcher (`mpirun -np 2 program`); WORLD_SIZE=1 is one process and runs as one.
//
//   dist::LaunchEnvironment env = dist::read_launch_environment();
//   if (env.launcher == dist::Launcher::none) ...   // one process, dist::SingleProcessGroup
#include <cstdint>
#include <functional>
#include <string>

namespace ember::dist {

enum class Launcher : uint8_t { none, mpi, torchrun };

struct LaunchEnvironment {
  Launcher launcher = Launcher::none;
  std::string variables;  // the variables that said so, for messages: "OMPI_COMM_WORLD_SIZE=2"
  int rank = 0;
  int size = 1;
  int local_rank = 0;
};

// Reads the variables through `getenv` (tests pass their own). A value that is not a whole number,
// or a rank outside the size, throws naming the variable and its text.
using GetEnv = std::function<const char*(const char*)>;
LaunchEnvironment read_launch_environment(const GetEnv& getenv);
LaunchEnvironment read_launch_environment();  // this process's environment

}  // namespace ember::dist
