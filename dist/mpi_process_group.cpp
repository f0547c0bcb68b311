#include "dist/mpi_process_group.h"

#include "core/error.h"
#include "dist/mpi_runtime.h"

#if EMBER_HAVE_MPI
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <thread>
#include <type_traits>

#include "dist/abort_job.h"
#include "dist/nccl_process_group.h"
#include "memory/empty.h"
#endif

namespace ember::dist {

#if EMBER_HAVE_MPI

namespace {

// Throws naming the collective, the MPI call and MPI's own words for the error.
void check_mpi(int rc, const char* call, const char* collective) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  EMBER_THROW(collective << ": " << call << " failed: " << std::string(text, length));
}

// The MPI type of a dtype's elements. f16 and u8 are only moved (broadcast, all_gather): the
// reductions refuse them before reaching MPI (dist/process_group.cpp).
MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i64: return MPI_INT64_T;
    case DType::f16: return MPI_UINT16_T;
    case DType::u8: return MPI_UINT8_T;
  }
  return MPI_DATATYPE_NULL;
}

int mpi_count(const Tensor& t, const char* collective) {
  EMBER_CHECK(t.numel() <= INT_MAX, collective << ": " << t.shape() << " has " << t.numel()
                                               << " elements, more than MPI's count (an int) can hold: "
                                               << "split it into tensors of at most " << INT_MAX);
  return static_cast<int>(t.numel());
}

// t /= size, elementwise: the average from MPI's sum (floating dtypes: i64 is refused upstream).
// A division, not a multiplication by 1/size, so a sum divisible by size gives its exact quotient.
void divide_by_size(const Tensor& t, int size) {
  auto divide = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] /= static_cast<T>(size);
  };
  if (t.dtype() == DType::f64) divide(t.data<double>());
  else divide(t.data<float>());
}

void finish(const Tensor& t, ReduceOp op, int size) {
  if (op == ReduceOp::average) divide_by_size(t, size);
}

class MpiProcessGroup;

// all_reduce_async's MPI_Iallreduce, finished by wait().
class MpiWork final : public Work {
 public:
  MpiWork(const MpiProcessGroup& group, Tensor t, ReduceOp op, MPI_Request request)
      : group_(group), t_(std::move(t)), op_(op), request_(request) {}
  ~MpiWork() override;
  void wait() override;

 private:
  const MpiProcessGroup& group_;
  Tensor t_;  // holds the bytes MPI writes until the request is done
  ReduceOp op_;
  MPI_Request request_;
  bool done_ = false;
};

class MpiProcessGroup final : public ProcessGroup {
 public:
  MpiProcessGroup(MPI_Comm comm, int rank, int size, int local_rank, int timeout_seconds)
      : ProcessGroup(rank, size, local_rank), comm_(comm), timeout_seconds_(timeout_seconds) {}
  ~MpiProcessGroup() override {
    nccl_.reset();
    if (mpi_running()) MPI_Comm_free(&comm_);
  }
  std::string backend_name() const override { return built_with_nccl() ? "mpi+nccl" : "mpi"; }

  // Waits for `request`, or ends the job after the timeout (see mpi_process_group.h).
  void wait(MPI_Request& request, const char* collective) const {
    if (timeout_seconds_ <= 0) {
      check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait", collective);
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds_);
    for (;;) {
      int done = 0;
      check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test", collective);
      if (done) return;
      if (std::chrono::steady_clock::now() > deadline)
        abort_job(std::string(collective) + " did not complete within " + std::to_string(timeout_seconds_) +
                  " s (EMBER_DIST_TIMEOUT): another rank has stopped, hangs, or called a different collective");
      std::this_thread::yield();  // MPI_Test also drives MPI's progress
    }
  }

 protected:
  void all_reduce_impl(const Tensor& t, ReduceOp op) override {
    if (t.is_cuda()) return cuda_group(t, "all_reduce").all_reduce(t, op);
    void* data = t.data_ptr();
    const int count = mpi_count(t, "all_reduce");
    const MPI_Datatype type = mpi_type(t.dtype());
    run("all_reduce", "MPI_Allreduce",
        [&] { return MPI_Allreduce(MPI_IN_PLACE, data, count, type, MPI_SUM, comm_); },
        [&](MPI_Request* r) { return MPI_Iallreduce(MPI_IN_PLACE, data, count, type, MPI_SUM, comm_, r); });
    finish(t, op, size());
  }

  void broadcast_impl(const Tensor& t, int root) override {
    if (t.is_cuda()) return cuda_group(t, "broadcast").broadcast(t, root);
    void* data = t.data_ptr();
    const int count = mpi_count(t, "broadcast");
    const MPI_Datatype type = mpi_type(t.dtype());
    run("broadcast", "MPI_Bcast", [&] { return MPI_Bcast(data, count, type, root, comm_); },
        [&](MPI_Request* r) { return MPI_Ibcast(data, count, type, root, comm_, r); });
  }

  void reduce_scatter_impl(const Tensor& input, const Tensor& output, ReduceOp op) override {
    if (input.is_cuda()) return cuda_group(input, "reduce_scatter").reduce_scatter(input, output, op);
    // In place (output is this rank's chunk of input): MPI wants separate buffers, so reduce into a
    // temporary and copy; the rest of input stays as it was.
    const bool in_place = output.shares_storage(input);
    const Tensor result = in_place ? empty(output.shape(), TensorOptions().dtype(output.dtype())) : output;
    const void* send = input.data_ptr();
    void* receive = result.data_ptr();
    mpi_count(input, "reduce_scatter");
    const int count = mpi_count(output, "reduce_scatter");
    const MPI_Datatype type = mpi_type(input.dtype());
    run("reduce_scatter", "MPI_Reduce_scatter_block",
        [&] { return MPI_Reduce_scatter_block(send, receive, count, type, MPI_SUM, comm_); },
        [&](MPI_Request* r) { return MPI_Ireduce_scatter_block(send, receive, count, type, MPI_SUM, comm_, r); });
    finish(result, op, size());
    if (in_place) std::memcpy(output.data_ptr(), result.data_ptr(), output.nbytes());
  }

  void all_gather_impl(const Tensor& input, const Tensor& output) override {
    if (input.is_cuda()) return cuda_group(input, "all_gather").all_gather(input, output);
    // In place (input is this rank's chunk of output): MPI_IN_PLACE says exactly that.
    const bool in_place = input.shares_storage(output) &&
                          input.data_ptr() == static_cast<char*>(output.data_ptr()) + rank() * input.nbytes();
    const void* send = in_place ? MPI_IN_PLACE : input.data_ptr();
    void* receive = output.data_ptr();
    mpi_count(output, "all_gather");
    const int count = mpi_count(input, "all_gather");
    const MPI_Datatype type = mpi_type(input.dtype());
    run("all_gather", "MPI_Allgather",
        [&] { return MPI_Allgather(send, count, type, receive, count, type, comm_); },
        [&](MPI_Request* r) { return MPI_Iallgather(send, count, type, receive, count, type, comm_, r); });
  }

  void barrier_impl() override {
    run("barrier", "MPI_Barrier", [&] { return MPI_Barrier(comm_); },
        [&](MPI_Request* r) { return MPI_Ibarrier(comm_, r); });
  }

  std::unique_ptr<Work> all_reduce_async_impl(const Tensor& t, ReduceOp op) override {
    if (t.is_cuda()) return cuda_group(t, "all_reduce_async").all_reduce_async(t, op);
    MPI_Request request;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, t.data_ptr(), mpi_count(t, "all_reduce_async"), mpi_type(t.dtype()),
                             MPI_SUM, comm_, &request),
              "MPI_Iallreduce", "all_reduce_async");
    return std::make_unique<MpiWork>(*this, t, op, request);
  }

 private:
  // One collective: the blocking MPI call, or with a timeout its nonblocking twin and wait().
  template <class Blocking, class Start>
  void run(const char* collective, const char* call, Blocking blocking, Start start) {
    if (timeout_seconds_ <= 0) {
      check_mpi(blocking(), call, collective);
      return;
    }
    MPI_Request request;
    check_mpi(start(&request), call, collective);
    wait(request, collective);
  }

  // The NCCL group for CUDA tensors, made at the first CUDA collective (on every rank at the same
  // point, as collectives are called in the same order), on that tensor's device.
  ProcessGroup& cuda_group(const Tensor& t, const char* collective) {
    EMBER_CHECK(built_with_nccl(), collective << ": " << t.shape() << " is on " << t.device() << ", and this ember "
                                              << "was built without NCCL, which runs collectives on CUDA tensors: "
                                              << "move it to the CPU, or build with CUDA and NCCL (EMBER_NCCL)");
    if (!nccl_) nccl_ = make_nccl_process_group(*this, t.device());
    return *nccl_;
  }

  MPI_Comm comm_;
  int timeout_seconds_ = 0;
  std::unique_ptr<ProcessGroup> nccl_;
};

MpiWork::~MpiWork() {
  if (done_) return;
  try {
    wait();
  } catch (...) {  // destructors never throw; the error ends nothing else here
  }
}

void MpiWork::wait() {
  if (done_) return;
  group_.wait(request_, "all_reduce_async");
  done_ = true;
  finish(t_, op_, group_.size());
}

}  // namespace

std::unique_ptr<ProcessGroup> make_mpi_process_group(int timeout_seconds) {
  EMBER_CHECK(mpi_running(), "dist: MPI is not running: dist::start_mpi() (or dist::init_process_group()) first");
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup", "dist");
  check_mpi(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", "dist");
  int rank = 0, size = 1, local_rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank", "dist");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size", "dist");
  // The local rank: this rank's place among the ranks that share its memory (its machine).
  MPI_Comm machine = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &machine), "MPI_Comm_split_type",
            "dist");
  check_mpi(MPI_Comm_rank(machine, &local_rank), "MPI_Comm_rank", "dist");
  MPI_Comm_free(&machine);
  return std::make_unique<MpiProcessGroup>(comm, rank, size, local_rank, timeout_seconds);
}

#else  // built without MPI

std::unique_ptr<ProcessGroup> make_mpi_process_group(int) { throw_not_built_with_mpi(); }

#endif

}  // namespace ember::dist
