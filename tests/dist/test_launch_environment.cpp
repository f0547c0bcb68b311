// dist/launch_environment.h: the launchers' variables, read through a fake environment.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "dist/launch_environment.h"

using namespace ember::dist;
using Catch::Matchers::Contains;

namespace {
LaunchEnvironment read(const std::map<std::string, std::string>& variables) {
  return read_launch_environment([&](const char* name) -> const char* {
    auto at = variables.find(name);
    return at == variables.end() ? nullptr : at->second.c_str();
  });
}
}  // namespace

TEST_CASE("launch environment: Open MPI's, MPICH's and torchrun's variables", "[dist]") {
  LaunchEnvironment none = read({});
  CHECK(none.launcher == Launcher::none);
  CHECK(none.rank == 0);
  CHECK(none.size == 1);

  LaunchEnvironment ompi = read({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"RANK", "7"}, {"WORLD_SIZE", "8"}});
  CHECK(ompi.launcher == Launcher::mpi);  // an MPI launcher's variables win
  CHECK(ompi.rank == 2);
  CHECK(ompi.size == 3);
  CHECK(ompi.local_rank == 1);
  CHECK(ompi.variables == "OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=2");

  LaunchEnvironment mpich = read({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}});
  CHECK(mpich.launcher == Launcher::mpi);
  CHECK(mpich.rank == 1);
  CHECK(mpich.local_rank == 0);

  LaunchEnvironment torchrun = read({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}});
  CHECK(torchrun.launcher == Launcher::torchrun);
  CHECK(torchrun.size == 4);
  CHECK(torchrun.local_rank == 1);
  CHECK(read({{"RANK", "0"}, {"WORLD_SIZE", "1"}}).launcher == Launcher::none);  // one process
}

TEST_CASE("launch environment: values that are not ranks are refused, naming the variable", "[dist]") {
  CHECK_THROWS_WITH(read({{"OMPI_COMM_WORLD_SIZE", "two"}}), Contains("OMPI_COMM_WORLD_SIZE: cannot read 'two'"));
  CHECK_THROWS_WITH(read({{"WORLD_SIZE", "0"}}), Contains("WORLD_SIZE: cannot read '0' as a whole number from 1"));
  CHECK_THROWS_WITH(read({{"RANK", "-1"}, {"WORLD_SIZE", "2"}}), Contains("RANK: cannot read '-1'"));
  CHECK_THROWS_WITH(read({{"PMI_RANK", "2"}, {"PMI_SIZE", "2"}}), Contains("PMI_RANK=2 is not below PMI_SIZE=2"));
}
