#include "dist/planned_process_group.h"

#include "core/error.h"

namespace ember::dist {

PlannedProcessGroup::PlannedProcessGroup(int size) : ProcessGroup(0, size, 0) {}

std::unique_ptr<Work> PlannedProcessGroup::all_reduce_async_impl(const Tensor&, ReduceOp) {
  refuse("all_reduce_async");
}

void PlannedProcessGroup::refuse(const char* collective) const {
  EMBER_THROW(collective << ": a planned group of " << size()
                         << " ranks has no other processes; it runs collectives only in a SimulationScope "
                            "(a planned step), where they send nothing");
}

}  // namespace ember::dist
