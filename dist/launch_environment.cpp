#include "dist/launch_environment.h"

#include <climits>
#include <cstdlib>

#include "core/error.h"
#include "core/parse_integer.h"

namespace ember::dist {

namespace {

// One launcher's three variables (local_rank may be absent: then 0).
struct LauncherVariables {
  Launcher launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
};

constexpr LauncherVariables kLaunchers[] = {
    {Launcher::mpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {Launcher::mpi, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {Launcher::torchrun, "RANK", "WORLD_SIZE", "LOCAL_RANK"},
};

int read_int(const GetEnv& getenv, const char* name, int min, int max, int fallback) {
  const char* text = getenv(name);
  if (text == nullptr) return fallback;
  return static_cast<int>(parse_integer(text, name, min, max));
}

}  // namespace

LaunchEnvironment read_launch_environment(const GetEnv& getenv) {
  for (const LauncherVariables& v : kLaunchers) {
    if (getenv(v.size) == nullptr) continue;
    LaunchEnvironment env;
    env.launcher = v.launcher;
    env.size = read_int(getenv, v.size, 1, INT_MAX, 1);
    env.rank = read_int(getenv, v.rank, 0, INT_MAX, 0);
    env.local_rank = read_int(getenv, v.local_rank, 0, INT_MAX, 0);
    env.variables = std::string(v.size) + "=" + std::to_string(env.size) + " " + v.rank + "=" +
                    std::to_string(env.rank);
    EMBER_CHECK(env.rank < env.size, "the launcher's environment is inconsistent: " << v.rank << "=" << env.rank
                                                                                    << " is not below " << v.size
                                                                                    << "=" << env.size);
    if (env.launcher == Launcher::torchrun && env.size == 1) return LaunchEnvironment{};  // one process
    return env;
  }
  return LaunchEnvironment{};
}

LaunchEnvironment read_launch_environment() {
  return read_launch_environment([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

}  // namespace ember::dist
