#pragma once
// A process group: the ranks of one job and the collectives they run together on ember
// tensors. Every rank calls the same collectives in the same order with tensors of the same
// dtype and size; each call returns when this rank's part is done.
//
//   dist::ProcessGroup& group = dist::world();           // dist/world.h: from mpirun's environment
//   Tensor grad = ...;                                   // same shape on every rank
//   group.all_reduce(grad, dist::ReduceOp::average);     // in place: the mean over the ranks
//   group.broadcast(weights, /*root=*/0);                // every rank gets rank 0's values
//   Tensor shard = empty({n / group.size()});
//   group.reduce_scatter(grad, shard, dist::ReduceOp::sum);  // rank r: sum of every rank's r-th chunk
//   group.all_gather(shard, grad);                       // the chunks back, in rank order
//   auto work = group.all_reduce_async(grad, dist::ReduceOp::sum);
//   ...                                                  // more backward while it runs
//   work->wait();
//
// The public methods check their arguments here, once, for every backend (errors name the
// collective and the shapes), then call the backend's *_impl. Tensors are used as flat runs
// of elements: only numel, dtype and device matter, not the shape. What each backend takes:
//
//   dtype   all_reduce / reduce_scatter        broadcast / all_gather
//   f32 f64 yes                                yes
//   i64     sum (average would truncate)       yes
//   f16     CUDA tensors only (NCCL): MPI has  yes (moved as bytes)
//           no half type to add in
//   u8      no (a sum overflows)               yes
//
// Collectives write into their tensors outside autograd: they are never recorded, and the
// version counter of each tensor they write moves (core/tensor.h), as with kernels/'s in-place
// ops, so a tensor saved for backward and then overwritten by a collective is refused there.
// In a SimulationScope (memory/simulation.h) they check their arguments and communicate
// nothing, so a planned step runs in one process.
//
// One thread at a time may call a group (MPI is initialised for MPI_THREAD_SERIALIZED).
#include <cstdint>
#include <memory>
#include <string>

#include "core/tensor.h"

namespace ember::dist {

enum class ReduceOp : uint8_t {
  sum,
  average,  // the sum divided by size() (floating dtypes)
};
const char* reduce_op_name(ReduceOp op);

// A collective started by all_reduce_async. wait() returns once the tensor holds the result
// for the caller: on the CPU the values are there; for a CUDA tensor the work the caller
// queues next on the tensor device's current stream runs after the reduction (the host does
// not block, as with a kernel). wait() may be called again; a Work destroyed without wait()
// waits in its destructor, since the backend may still be writing into the tensor. A Work does
// not outlive the group that made it.
class Work {
 public:
  virtual ~Work() = default;
  virtual void wait() = 0;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }              // 0 .. size() - 1
  int size() const { return size_; }              // the number of processes in the job
  int local_rank() const { return local_rank_; }  // rank among the processes on this machine
  // "single", "mpi", "mpi+nccl": what runs CPU and CUDA tensors' collectives.
  virtual std::string backend_name() const = 0;

  // t = op over the ranks' t, in place.
  void all_reduce(const Tensor& t, ReduceOp op);
  // t = rank root's t.
  void broadcast(const Tensor& t, int root);
  // input holds size() chunks of output.numel() elements; rank r's output = op over the
  // ranks of their r-th chunk. input and output do not overlap.
  void reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op);
  // output (size() x input.numel() elements) = the ranks' inputs, concatenated in rank order.
  void all_gather(const Tensor& input, const Tensor& output);
  // Returns when every rank has called it (processes only: CUDA streams are not waited for).
  void barrier();
  // all_reduce, started: t holds the result after the Work's wait(). t must not be read or
  // written until then.
  std::unique_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op);

 protected:
  ProcessGroup(int rank, int size, int local_rank);

  // The backend: arguments are checked, and the group is not simulating.
  virtual void all_reduce_impl(const Tensor& t, ReduceOp op) = 0;
  virtual void broadcast_impl(const Tensor& t, int root) = 0;
  virtual void reduce_scatter_impl(const Tensor& input, const Tensor& output, ReduceOp op) = 0;
  virtual void all_gather_impl(const Tensor& input, const Tensor& output) = 0;
  virtual void barrier_impl() = 0;
  virtual std::unique_ptr<Work> all_reduce_async_impl(const Tensor& t, ReduceOp op) = 0;

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
};

// A Work that is done when made: what a group returns when it ran the collective at once
// (one process, or a simulated step).
class CompletedWork final : public Work {
 public:
  void wait() override {}
};

}  // namespace ember::dist
