#pragma once
// Data-parallel training: every rank of a job (dist/) holds the whole model, trains on its
// own part of each batch, and the ranks combine their gradients before each update, so N
// ranks with batch B/N each take the steps one process takes with batch B. The Trainer does
// it when TrainerOptions::data_parallel names a group:
//
//   dist::ProcessGroup& world = dist::init_process_group();        // started by `mpirun -np 4`
//   train::TrainerOptions o;
//   o.data_parallel.group = &world;
//   o.data_parallel.zero = 1;                  // ZeRO-1: each rank keeps 1/4 of the optimizer state
//   train::Trainer trainer(model, make_optimizer, o);   // every rank starts from rank 0's weights
//   loader_options.shard(world.rank(), world.size());   // each rank its part of every epoch
//
// What each rank holds, and how ZeRO (Rajbhandari et al. 2020, DeepSpeed's stages) divides it:
//
//   zero  gradients              optimizer state (and fp16's fp32 masters)   parameters
//   0     whole (all-reduced)    whole, on every rank                        whole
//   1     whole (all-reduced)    1/N: each rank steps its shard, then the    whole
//                                parameters are all-gathered
//   2     1/N (reduce-scattered  1/N                                         whole
//         as they are made)
//
// A step is gradient accumulation whose micro-batches run on different ranks: each rank weights
// its micro-batches' losses by their share of all the ranks' samples (1 / (N a) for N ranks of
// a micro-batches) before backward, as one process accumulating N a micro-batches does, and the
// ranks sum. (PyTorch's DDP divides the sum by N instead; the weights are the same, but applied
// before backward every rank's fp16 gradients round exactly as the one process's do.) The
// gradients travel in buckets of about bucket_bytes (PyTorch DDP's 25 MiB), filled in reverse
// order of registration (the order backward makes them), each sent as soon as its last
// gradient is ready (Tensor::set_post_accumulate_grad_hook), so communication overlaps the
// rest of backward. The sum is in fp32 under both precisions: fp16 gradients are unscaled into
// the fp32 buckets first (the masters' own arithmetic, at twice the bytes on the wire of an f16
// reduction, which would round every partial sum to f16). With accumulation, ZeRO 0 and 1
// send nothing until the last micro-batch (PyTorch's no_sync); ZeRO 2 reduce-scatters every
// micro-batch, as DeepSpeed does, since that is what keeps the gradients sharded. BatchNorm normalises with each rank's
// own batch statistics (as DDP does, unlike SyncBatchNorm); the running statistics are rank
// 0's, broadcast at the start of each step (DDP's broadcast_buffers).
//
// Under ZeRO 1 and 2 the optimizer factory is given one flat fp32 tensor per bucket (this
// rank's shard), not the model's parameters: per-parameter groups (optim::decay_groups) and
// rules that look at a parameter's shape are not available there. Every rank must call the
// Trainer's constructor and step() together, with the same options (checked at construction).
#include <cstdint>

#include "dist/process_group.h"
#include "models/module.h"

namespace ember::train {

struct DataParallelOptions {
  dist::ProcessGroup* group = nullptr;  // null: one process, no data parallelism
  int zero = 0;                         // ZeRO stage: 0, 1 or 2
  int64_t bucket_bytes = int64_t{25} << 20;
  bool broadcast_buffers = true;        // rank 0's BatchNorm statistics at every step
  bool overlap = true;                  // false: the buckets go after backward (what overlap hides, measured)

  bool enabled() const { return group != nullptr; }
  int ranks() const { return group == nullptr ? 1 : group->size(); }
  // Throws naming the field: a zero stage other than 0, 1, 2, or a bucket below 1 byte.
  void check() const;
};

// Every rank's parameters and buffers become rank 0's (the start of a data-parallel run).
void broadcast_module(nn::Module& model, dist::ProcessGroup& group, int root = 0);
void broadcast_buffers(nn::Module& model, dist::ProcessGroup& group, int root = 0);

}  // namespace ember::train
