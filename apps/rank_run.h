#pragma once
// `ember train` and `ember bench-train` as the ranks of an MPI job: every rank runs the same
// command line, trains on its part of each epoch (data-parallel, train/data_parallel.h), and
// only rank 0 prints; each rank writes its own files.
//
//   mpirun -np 2 ember train --model convnet --zero 1 --save run.ckpt --memory-json mem.json
//   # rank 0 prints the table and writes run.ckpt and mem.json; rank 1 writes run.ckpt.rank1
//   # and mem.rank1.json
//
//   RankRun ranks = start_rank_run(/*zero=*/1);        // the job's group, from mpirun's environment
//   std::ostream& shown = ranks.shown(std::cout);      // std::cout on rank 0, a sink elsewhere
#include <ostream>
#include <string>

#include "apps/memory_session.h"
#include "dist/process_group.h"

namespace CLI {
class App;
}

namespace ember::apps {

struct RankRun {
  dist::ProcessGroup* group = nullptr;  // null: one process, no data parallelism
  int rank = 0;
  int ranks = 1;

  bool prints() const { return rank == 0; }
  // `out` on rank 0; on the other ranks a stream that discards.
  std::ostream& shown(std::ostream& out) const;
};

// Makes the job's process group (dist::init_process_group) and returns it as the data-parallel
// group when the job has several ranks or ZeRO sharding is asked for (a job of one rank with
// --zero runs the sharded code over one rank).
RankRun start_rank_run(int zero);
// Rank r's copy of an output file: "mem.json" -> "mem.rank1.json" (rank 0 keeps the name).
std::string rank_path(const std::string& path, int rank);
// The memory files (--memory-report, --memory-trace, --memory-json) of rank r.
MemoryOptions rank_memory_options(MemoryOptions options, int rank);
// Before anything runs in a job of several processes: train and bench-train check that every
// rank was given the same flags (naming those that differ, dist/same_on_all_ranks.h); the
// other commands are refused, since they run in one process.
void check_command_for_ranks(const CLI::App& parsed);

}  // namespace ember::apps
