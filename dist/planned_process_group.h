#pragma once
// The group a planned step runs with: rank 0 of `size` ranks, for train/plan/'s shape-only
// step (memory/simulation.h). Inside a SimulationScope every collective checks its arguments
// and sends nothing (dist/process_group.h), so one process plans what each rank of an N-rank
// job allocates; outside one, a collective throws, since there are no other ranks.
//
//   dist::PlannedProcessGroup ranks(4);
//   SimulationScope simulate;                 // memory/simulation.h
//   ... build a Trainer with data_parallel.group = &ranks and run a step ...
#include "dist/process_group.h"

namespace ember::dist {

class PlannedProcessGroup final : public ProcessGroup {
 public:
  explicit PlannedProcessGroup(int size);
  std::string backend_name() const override { return "planned"; }

 protected:
  void all_reduce_impl(const Tensor&, ReduceOp) override { refuse("all_reduce"); }
  void broadcast_impl(const Tensor&, int) override { refuse("broadcast"); }
  void reduce_scatter_impl(const Tensor&, const Tensor&, ReduceOp) override { refuse("reduce_scatter"); }
  void all_gather_impl(const Tensor&, const Tensor&) override { refuse("all_gather"); }
  void barrier_impl() override { refuse("barrier"); }
  std::unique_ptr<Work> all_reduce_async_impl(const Tensor&, ReduceOp) override;

 private:
  [[noreturn]] void refuse(const char* collective) const;
};

}  // namespace ember::dist
