#pragma once
// The NCCL backend: collectives on CUDA tensors of one device per rank, queued on that device's
// current ember stream (core/cuda_stream.h), as a kernel would be: the call returns once they are
// queued, and later work on the stream sees the result. dist::world()'s MPI group makes one at its
// first CUDA collective, on that tensor's device, so a program only puts each rank's tensors on
// its own GPU (cuda:local_rank, usually):
//
//   Device gpu(DeviceType::cuda, dist::world().local_rank());
//   Tensor grad = ...;                                    // on gpu
//   dist::world().all_reduce(grad, dist::ReduceOp::average);  // ncclAllReduce with ncclAvg
//
// all_reduce_async queues the collective on a communication stream of its own, after the work
// queued so far on the current stream; the Work's wait() makes the current stream wait for it.
// The average is ncclAvg (NCCL 2.10 and later; before, the sum and a division on the stream).
// barrier() is the bootstrap group's (processes, not streams). No timeout: a rank that stops
// leaves the others' streams waiting, so end the job with dist::abort_job on an error.
//
// NCCL refuses two ranks on one GPU ("Duplicate GPU detected"): a job needs a GPU per rank. This
// backend is compiled wherever CUDA and NCCL are found, and verified only on machines with two or
// more GPUs (docs/distributed.md); with one GPU, a group of one rank runs every call.
#include <memory>

#include "core/device.h"
#include "dist/process_group.h"

namespace ember::dist {

// True when ember was built with NCCL (EMBER_NCCL, with the CUDA backend).
bool built_with_nccl();

// A group with bootstrap's ranks whose collectives run over NCCL on `device`. Collective over
// bootstrap: rank 0 makes NCCL's unique id and bootstrap.broadcast hands it to the others, so
// every rank calls it at the same point, with its own device. bootstrap outlives the group (its
// barrier() is the group's).
std::unique_ptr<ProcessGroup> make_nccl_process_group(ProcessGroup& bootstrap, const Device& device);

}  // namespace ember::dist
