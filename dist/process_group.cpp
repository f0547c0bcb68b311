#include "dist/process_group.h"

#include <cstdint>

#include "core/error.h"
#include "core/simulation.h"

namespace ember::dist {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::average: return "average";
  }
  return "?";
}

namespace {

void check_defined(const Tensor& t, const char* op, const char* arg) {
  EMBER_CHECK(t.defined(), op << ": " << arg << " is an undefined tensor");
}

// The dtypes a reduction adds in (the table in process_group.h).
void check_reducible(const Tensor& t, ReduceOp op, const char* collective) {
  switch (t.dtype()) {
    case DType::f32:
    case DType::f64:
      return;
    case DType::i64:
      EMBER_CHECK(op != ReduceOp::average, collective << ": the average of an i64 " << t.shape()
                                                      << " would truncate: reduce with sum, or cast to f32 or f64 first");
      return;
    case DType::f16:
      EMBER_CHECK(t.is_cuda(), collective << ": f16 " << t.shape() << " on the CPU cannot be reduced: MPI has no "
                                          << "half-precision type to add in; cast it to f32 first (CUDA tensors reduce "
                                          << "in f16 over NCCL)");
      return;
    case DType::u8:
      EMBER_THROW(collective << ": u8 " << t.shape() << " cannot be reduced (a sum of bytes overflows): cast it to "
                             << "i64 first (broadcast and all_gather take u8)");
  }
}

void check_pair(const Tensor& input, const Tensor& output, const char* collective) {
  check_defined(input, collective, "input");
  check_defined(output, collective, "output");
  EMBER_CHECK(input.dtype() == output.dtype(), collective << ": input " << input.shape() << " is "
                                                          << input.dtype() << " but output " << output.shape()
                                                          << " is " << output.dtype());
  EMBER_CHECK(input.device() == output.device(), collective << ": input " << input.shape() << " is on "
                                                            << input.device() << " but output " << output.shape()
                                                            << " is on " << output.device());
}

// Byte ranges of two tensors intersect.
bool overlaps(const Tensor& a, const Tensor& b) {
  if (!a.shares_storage(b) || a.nbytes() == 0 || b.nbytes() == 0) return false;
  const auto* pa = static_cast<const char*>(a.data_ptr());
  const auto* pb = static_cast<const char*>(b.data_ptr());
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

// `chunk` is exactly this rank's chunk of `whole` (the in-place forms of reduce_scatter and
// all_gather, which ZeRO uses on one flat buffer).
bool is_rank_chunk(const Tensor& chunk, const Tensor& whole, int rank) {
  return chunk.shares_storage(whole) &&
         chunk.data_ptr() == static_cast<const char*>(whole.data_ptr()) + rank * chunk.nbytes();
}

}  // namespace

ProcessGroup::ProcessGroup(int rank, int size, int local_rank) : rank_(rank), size_(size), local_rank_(local_rank) {
  EMBER_CHECK(size >= 1 && rank >= 0 && rank < size && local_rank >= 0 && local_rank < size,
              "ProcessGroup: rank " << rank << ", size " << size << " and local rank " << local_rank
                                    << " do not describe a process of a job");
}

void ProcessGroup::all_reduce(const Tensor& t, ReduceOp op) {
  check_defined(t, "all_reduce", "the tensor");
  check_reducible(t, op, "all_reduce");
  if (simulating()) return;
  t.bump_version();
  all_reduce_impl(t, op);
}

void ProcessGroup::broadcast(const Tensor& t, int root) {
  check_defined(t, "broadcast", "the tensor");
  EMBER_CHECK(root >= 0 && root < size_, "broadcast: root " << root << " is not a rank of this group of " << size_
                                                            << " (0 .. " << size_ - 1 << ")");
  if (simulating()) return;
  if (rank_ != root) t.bump_version();  // the root's tensor is only read
  broadcast_impl(t, root);
}

void ProcessGroup::reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op) {
  check_pair(input, output, "reduce_scatter");
  check_reducible(input, op, "reduce_scatter");
  EMBER_CHECK(input.numel() == size_ * output.numel(),
              "reduce_scatter: input " << input.shape() << " has " << input.numel() << " elements, but " << size_
                                       << " ranks need " << size_ << " chunks of output " << output.shape() << "'s "
                                       << output.numel() << " = " << size_ * output.numel());
  EMBER_CHECK(!overlaps(input, output) || is_rank_chunk(output, input, rank_),
              "reduce_scatter: output " << output.shape() << " overlaps input " << input.shape()
                                        << " other than as rank " << rank_ << "'s chunk (elements ["
                                        << rank_ * output.numel() << ", " << (rank_ + 1) * output.numel()
                                        << ")): pass separate tensors, or exactly that chunk of input");
  if (simulating()) return;
  output.bump_version();
  reduce_scatter_impl(input, output, op);
}

void ProcessGroup::all_gather(const Tensor& input, const Tensor& output) {
  check_pair(input, output, "all_gather");
  EMBER_CHECK(output.numel() == size_ * input.numel(),
              "all_gather: output " << output.shape() << " has " << output.numel() << " elements, but " << size_
                                    << " ranks' inputs " << input.shape() << " make " << size_ << " x "
                                    << input.numel() << " = " << size_ * input.numel());
  EMBER_CHECK(!overlaps(input, output) || is_rank_chunk(input, output, rank_),
              "all_gather: input " << input.shape() << " overlaps output " << output.shape()
                                   << " other than as rank " << rank_ << "'s chunk (elements ["
                                   << rank_ * input.numel() << ", " << (rank_ + 1) * input.numel()
                                   << ")): pass separate tensors, or exactly that chunk of output");
  if (simulating()) return;
  output.bump_version();
  all_gather_impl(input, output);
}

void ProcessGroup::barrier() {
  if (simulating()) return;
  barrier_impl();
}

std::unique_ptr<Work> ProcessGroup::all_reduce_async(const Tensor& t, ReduceOp op) {
  check_defined(t, "all_reduce_async", "the tensor");
  check_reducible(t, op, "all_reduce_async");
  if (simulating()) return std::make_unique<CompletedWork>();
  t.bump_version();
  return all_reduce_async_impl(t, op);
}

}  // namespace ember::dist
