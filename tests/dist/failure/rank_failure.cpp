// A job in which rank 1 fails while rank 0 waits for it in an all_reduce. The CTest entries
// "dist: rank 1 ..." run it under `mpiexec -n 2` (tests/dist/CMakeLists.txt) and expect the whole
// job to end, soon, with a non-zero status and rank 1's message (tests/dist/expect_job_failure.cmake):
//
//   ember_dist_rank_failure throw      rank 1 throws; main catches it and calls dist::abort_job
//   ember_dist_rank_failure uncaught   rank 1's exception escapes main (std::terminate -> abort_job)
//   ember_dist_rank_failure hang       rank 1 sleeps; rank 0's EMBER_DIST_TIMEOUT ends the job
//   ember_dist_rank_failure die        rank 1 is killed (SIGKILL); mpiexec ends the others
#include <chrono>
#include <csignal>
#include <iostream>
#include <string>
#include <thread>

#include "core/error.h"
#include "dist/abort_job.h"
#include "dist/world.h"
#include "kernels/factories.h"

namespace {

void run(const std::string& mode) {
  using namespace ember;
  dist::ProcessGroup& group = dist::init_process_group();
  Tensor t = zeros({4});
  if (group.rank() == 1) {
    if (mode == "throw" || mode == "uncaught") EMBER_THROW("rank 1 failed on purpose before the all_reduce");
    if (mode == "hang") std::this_thread::sleep_for(std::chrono::seconds(60));
    if (mode == "die") std::raise(SIGKILL);
  }
  group.all_reduce(t, dist::ReduceOp::sum);
  std::cout << "rank " << group.rank() << ": the all_reduce returned, which it must not in mode " << mode << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "throw" && mode != "uncaught" && mode != "hang" && mode != "die") {
    std::cerr << "usage: ember_dist_rank_failure throw|uncaught|hang|die (under mpiexec -n 2)\n";
    return 2;
  }
  if (mode == "uncaught") {
    run(mode);
    return 0;
  }
  try {
    run(mode);
  } catch (const std::exception& e) {
    ember::dist::abort_job(e.what());
  }
  return 0;
}
