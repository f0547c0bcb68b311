#include "dist/world.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "core/error.h"
#include "core/parse_integer.h"
#include "dist/abort_job.h"
#include "dist/launch_environment.h"
#include "dist/mpi_process_group.h"
#include "dist/mpi_runtime.h"
#include "dist/single_process_group.h"

namespace ember::dist {

namespace {

std::mutex init_mutex;  // one init at a time; reading the group needs no lock (abort_job reads it anywhere)
// Never destroyed: the group outlives static destructors (a CUDA context or MPI may be gone by then).
std::atomic<ProcessGroup*> world_group{nullptr};
int world_timeout_seconds = 0;

int timeout_from(const InitOptions& options) {
  if (options.timeout_seconds >= 0) return options.timeout_seconds;
  const char* text = std::getenv("EMBER_DIST_TIMEOUT");
  return text == nullptr ? 0 : static_cast<int>(parse_integer(text, "EMBER_DIST_TIMEOUT", 0, 1000000000));
}

std::unique_ptr<ProcessGroup> make_world(const LaunchEnvironment& env, int timeout_seconds) {
  if (env.launcher == Launcher::torchrun)
    EMBER_THROW("dist: " << env.variables << " (torchrun's variables) make this rank " << env.rank << " of "
                         << env.size << ", but ember's processes are started by an MPI launcher: run `mpirun -np "
                         << env.size << " <program>`");
  if (env.launcher == Launcher::mpi && (built_with_mpi() || env.size > 1)) {
    if (!built_with_mpi())
      EMBER_THROW("dist: " << env.variables << " make this rank " << env.rank << " of " << env.size
                           << ", but ember was not built with MPI: reconfigure with -DEMBER_MPI=ON after installing "
                           << "Open MPI (Debian: libopenmpi-dev openmpi-bin; scripts/setup.sh installs them)");
    start_mpi();
    abort_job_on_terminate();
    return make_mpi_process_group(timeout_seconds);
  }
  return std::make_unique<SingleProcessGroup>();
}

}  // namespace

ProcessGroup& init_process_group(const InitOptions& options) {
  std::lock_guard<std::mutex> lock(init_mutex);
  if (ProcessGroup* group = world_group.load()) {
    EMBER_CHECK(options.timeout_seconds < 0 || options.timeout_seconds == world_timeout_seconds,
                "dist::init_process_group: the group was made with a timeout of "
                    << world_timeout_seconds << " s, and this call asks for " << options.timeout_seconds << " s");
    return *group;
  }
  const int timeout_seconds = timeout_from(options);
  world_timeout_seconds = timeout_seconds;
  world_group = make_world(read_launch_environment(), timeout_seconds).release();
  return *world_group.load();
}

ProcessGroup& world() {
  if (ProcessGroup* group = world_group.load()) return *group;
  return init_process_group();
}

bool is_initialized() { return world_group.load() != nullptr; }

}  // namespace ember::dist
