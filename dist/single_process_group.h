#pragma once
// The group of one process: rank 0 of 1. Every collective leaves its tensor as it is or copies
// input to output, after the same checks as a real group's, so code written for ranks runs in
// one process, on CPU and CUDA tensors, and in builds without MPI. dist::world() is this group
// when the process was not started by an MPI launcher.
//
//   dist::SingleProcessGroup group;
//   group.all_reduce(grad, dist::ReduceOp::average);   // grad unchanged: the mean of one rank
//   group.all_gather(shard, full);                     // full = shard
#include "dist/process_group.h"

namespace ember::dist {

class SingleProcessGroup final : public ProcessGroup {
 public:
  SingleProcessGroup() : ProcessGroup(0, 1, 0) {}
  std::string backend_name() const override { return "single"; }

 protected:
  void all_reduce_impl(const Tensor&, ReduceOp) override {}
  void broadcast_impl(const Tensor&, int) override {}
  void reduce_scatter_impl(const Tensor& input, const Tensor& output, ReduceOp op) override;
  void all_gather_impl(const Tensor& input, const Tensor& output) override;
  void barrier_impl() override {}
  std::unique_ptr<Work> all_reduce_async_impl(const Tensor&, ReduceOp) override;
};

}  // namespace ember::dist
