// Catch2 entry point of ember_dist_tests, which CTest runs whole, once per job: in one process and
// as every rank of `mpiexec -n 2` and `-n 3` (tests/dist/CMakeLists.txt). Every rank runs the same
// cases in the same order, so their collectives pair up. A rank whose case fails returns non-zero,
// and mpiexec reports the job failed; a rank that then waits for a diverged peer is ended by
// EMBER_DIST_TIMEOUT, which the CTest entries set.
//
// Cases that need GPUs (tests/support/gpu_test_case.h: "cuda: ...", [cuda]) run only when every
// rank has a GPU of its own on its machine (local rank < GPUs); the ranks agree on that through an
// all_reduce first, since a case that runs on some ranks only would leave the others' collectives
// unmatched. Otherwise they are filtered out, as tests/main.cpp does, and counted as skipped.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include "core/cuda_runtime.h"
#include "dist/abort_job.h"
#include "dist/world.h"
#include "memory/empty.h"

int main(int argc, char** argv) {
  using namespace ember;
  dist::ProcessGroup* group = nullptr;
  try {
    group = &dist::init_process_group();
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  Tensor lacking = empty({1}, TensorOptions().dtype(DType::i64));
  lacking.data<int64_t>()[0] = cuda::device_count() > group->local_rank() ? 0 : 1;
  group->all_reduce(lacking, dist::ReduceOp::sum);
  const bool every_rank_has_a_gpu = lacking.data<int64_t>()[0] == 0;

  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  const Catch::ConfigData& config = session.configData();
  const bool listing = config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters;
  if (!every_rank_has_a_gpu && !listing) {
    auto& specs = session.configData().testsOrTags;
    if (specs.empty()) specs.push_back("~[cuda]");
    else for (std::string& spec : specs) spec += "~[cuda]";
    if (group->rank() == 0) std::cerr << "not every rank has a GPU of its own: [cuda] test cases are skipped\n";
  }
  return session.run();
}
