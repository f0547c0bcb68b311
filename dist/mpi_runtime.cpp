#include "dist/mpi_runtime.h"

#include <cstdlib>

#include "core/error.h"

#if EMBER_HAVE_MPI
#include <mpi.h>
#endif

namespace ember::dist {

void throw_not_built_with_mpi() {
  EMBER_THROW("dist: not built with MPI: reconfigure with -DEMBER_MPI=ON after installing Open MPI "
              "(Debian: libopenmpi-dev openmpi-bin; scripts/setup.sh installs them)");
}

#if EMBER_HAVE_MPI

bool built_with_mpi() { return true; }

bool mpi_running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

namespace {
void finalize_at_exit() {
  if (mpi_running()) MPI_Finalize();
}
}  // namespace

void start_mpi() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  EMBER_CHECK(!finalized, "dist: MPI was already finalised in this process, and it cannot be started again");
  int provided = 0;
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    // MPI_Init_thread may be given no arguments: Open MPI and MPICH read the launcher's environment.
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    EMBER_CHECK(rc == MPI_SUCCESS, "dist: MPI_Init_thread failed (error " << rc << ")");
    std::atexit(finalize_at_exit);
  }
  EMBER_CHECK(provided >= MPI_THREAD_SERIALIZED,
              "dist: this MPI gives thread level " << provided << ", and ember needs MPI_THREAD_SERIALIZED ("
                                                   << MPI_THREAD_SERIALIZED << "): any thread may call a process "
                                                   << "group, one at a time");
}

void abort_mpi_job(int code) {
  if (mpi_running()) MPI_Abort(MPI_COMM_WORLD, code);
}

#else  // built without MPI

bool built_with_mpi() { return false; }
bool mpi_running() { return false; }
void start_mpi() { throw_not_built_with_mpi(); }
void abort_mpi_job(int) {}

#endif

}  // namespace ember::dist
