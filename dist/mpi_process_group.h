#pragma once
// The MPI backend: a process group over MPI_COMM_WORLD (Open MPI from Debian is what CI runs).
// CPU tensors go through MPI's collectives; CUDA tensors through an NCCL group
// (dist/nccl_process_group.h) that it makes at its first CUDA collective, on that tensor's
// device, bootstrapped over MPI. Normally dist::init_process_group() (dist/world.h) makes it:
//
//   dist::start_mpi();                                      // dist/mpi_runtime.h
//   auto group = dist::make_mpi_process_group(/*timeout_seconds=*/0);
//   group->all_reduce(t, dist::ReduceOp::sum);              // MPI_Allreduce, in place
//
// It works on its own duplicate of MPI_COMM_WORLD, whose MPI errors return to ember and are
// thrown as ember::Error naming the MPI call and MPI's words for the error. The average is
// MPI's sum divided by size() (MPI has no average). MPI counts are ints: a tensor of more than
// 2^31 - 1 elements is refused. Nonblocking MPI collectives make progress when MPI is called:
// all_reduce_async overlaps little with computation on the CPU unless the caller tests or
// waits; it mainly frees the caller from waiting at each tensor.
//
// timeout_seconds > 0: each collective runs as its nonblocking twin (MPI_Iallreduce, ...) and a
// rank still waiting after that many seconds ends the job with dist::abort_job, naming the
// collective, instead of waiting for ever on a rank that hangs. 0: the blocking calls, no limit.
#include <memory>

#include "dist/process_group.h"

namespace ember::dist {

// Collective over MPI_COMM_WORLD. MPI must be running (dist::start_mpi()).
std::unique_ptr<ProcessGroup> make_mpi_process_group(int timeout_seconds);

}  // namespace ember::dist
