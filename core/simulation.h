#pragma once
// Shape-only runs. While simulating() is true on a thread (memory/simulation.h's
// SimulationScope sets it), the tensors made there get address space but no memory and
// the kernels skip their math (kernels/backend_dispatch.h), so real model code runs a
// whole training step in milliseconds and the allocator sees exactly the requests the
// real step would make. Host reads of tensor values (to_vector, item) give zeros.
//
//   if (simulating()) return;   // in a backend function, after it allocated its scratch
namespace ember {

bool simulating();
// For SimulationScope only.
void set_simulating(bool on);

}  // namespace ember
