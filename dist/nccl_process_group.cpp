// The NCCL backend (dist/nccl_process_group.h). A host-side file: NCCL's API is called from the
// host and queues its own kernels, so this compiles with the C++ compiler against nccl.h and the
// CUDA runtime's headers, when the build found NCCL (EMBER_HAVE_NCCL), and to stubs otherwise.
#include "dist/nccl_process_group.h"

#include "core/error.h"

#if EMBER_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>

#include "core/cuda_runtime.h"
#include "core/cuda_stream.h"
#include "kernels/ops.h"
#include "memory/empty.h"
#endif

namespace ember::dist {

#if EMBER_HAVE_NCCL

bool built_with_nccl() { return true; }

namespace {

// Throws naming the collective, the NCCL call, ncclGetErrorString and NCCL's last message.
void check_nccl(ncclResult_t rc, const char* call, const char* collective, ncclComm_t comm) {
  if (rc == ncclSuccess) return;
  std::string detail;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
  if (const char* last = ncclGetLastError(comm); last != nullptr && *last != '\0') detail = std::string(": ") + last;
#else
  (void)comm;
#endif
  EMBER_THROW(collective << ": " << call << " failed: " << ncclGetErrorString(rc) << detail);
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::i64: return ncclInt64;
    case DType::f16: return ncclFloat16;
    case DType::u8: return ncclUint8;
  }
  return ncclFloat32;
}

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
constexpr bool kHasAverage = true;
ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::average ? ncclAvg : ncclSum; }
#else
constexpr bool kHasAverage = false;
ncclRedOp_t nccl_op(ReduceOp) { return ncclSum; }
#endif

cudaStream_t handle(const cuda::Stream& stream) { return static_cast<cudaStream_t>(stream.handle()); }

// all_reduce_async's collective on the communication stream, finished by wait().
class NcclWork final : public Work {
 public:
  NcclWork(cuda::Event done, Device device) : done_(std::move(done)), device_(device) {}
  ~NcclWork() override {
    try {
      wait();
    } catch (...) {  // destructors never throw
    }
  }
  void wait() override {
    if (waited_) return;
    cuda::current_stream(device_).wait(done_);
    waited_ = true;
  }

 private:
  cuda::Event done_;
  Device device_;
  bool waited_ = false;
};

class NcclProcessGroup final : public ProcessGroup {
 public:
  NcclProcessGroup(ProcessGroup& bootstrap, const Device& device)
      : ProcessGroup(bootstrap.rank(), bootstrap.size(), bootstrap.local_rank()),
        bootstrap_(bootstrap),
        device_(device) {
    EMBER_CHECK(device.is_cuda(), "dist: an NCCL group runs on a CUDA device, not on " << device);
    cuda::check_device(device, "dist: NCCL group");
    // Rank 0's unique id, handed to the others as bytes over the bootstrap group.
    ncclUniqueId id;
    std::memset(&id, 0, sizeof(id));
    if (rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId", "dist", nullptr);
    Tensor id_bytes = empty({static_cast<int64_t>(sizeof(id))}, TensorOptions().dtype(DType::u8));
    std::memcpy(id_bytes.data_ptr(), &id, sizeof(id));
    bootstrap.broadcast(id_bytes, 0);
    std::memcpy(&id, id_bytes.data_ptr(), sizeof(id));
    cuda::DeviceGuard guard(device_);  // ncclCommInitRank binds the current device
    check_nccl(ncclCommInitRank(&comm_, size(), id, rank()), "ncclCommInitRank", "dist", nullptr);
    communication_ = cuda::Stream::create(device_);
  }
  ~NcclProcessGroup() override { ncclCommDestroy(comm_); }  // its error, if any, is dropped: never throws

  std::string backend_name() const override { return "nccl"; }

 protected:
  void all_reduce_impl(const Tensor& t, ReduceOp op) override {
    check_device(t, "all_reduce");
    cuda::DeviceGuard guard(device_);
    all_reduce_on(t, op, cuda::current_stream(device_), "all_reduce");
  }

  void broadcast_impl(const Tensor& t, int root) override {
    check_device(t, "broadcast");
    if (t.numel() == 0) return;
    cuda::DeviceGuard guard(device_);
    check_nccl(ncclBroadcast(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()), nccl_type(t.dtype()), root,
                             comm_, handle(cuda::current_stream(device_))),
               "ncclBroadcast", "broadcast", comm_);
  }

  // In place when output is this rank's chunk of input: NCCL takes that form as it is.
  void reduce_scatter_impl(const Tensor& input, const Tensor& output, ReduceOp op) override {
    check_device(input, "reduce_scatter");
    if (output.numel() == 0) return;
    cuda::DeviceGuard guard(device_);
    const cuda::Stream stream = cuda::current_stream(device_);
    check_nccl(ncclReduceScatter(input.data_ptr(), output.data_ptr(), static_cast<size_t>(output.numel()),
                                 nccl_type(input.dtype()), nccl_op(op), comm_, handle(stream)),
               "ncclReduceScatter", "reduce_scatter", comm_);
    if (op == ReduceOp::average && !kHasAverage) kernels::mul_scalar_(output, 1.0 / size());
  }

  // In place when input is this rank's chunk of output, as NCCL takes it.
  void all_gather_impl(const Tensor& input, const Tensor& output) override {
    check_device(input, "all_gather");
    if (input.numel() == 0) return;
    cuda::DeviceGuard guard(device_);
    check_nccl(ncclAllGather(input.data_ptr(), output.data_ptr(), static_cast<size_t>(input.numel()),
                             nccl_type(input.dtype()), comm_, handle(cuda::current_stream(device_))),
               "ncclAllGather", "all_gather", comm_);
  }

  void barrier_impl() override { bootstrap_.barrier(); }

  // On the communication stream, after what the current stream has queued so far (t's values).
  std::unique_ptr<Work> all_reduce_async_impl(const Tensor& t, ReduceOp op) override {
    check_device(t, "all_reduce_async");
    cuda::DeviceGuard guard(device_);
    communication_.wait(cuda::current_stream(device_));
    all_reduce_on(t, op, communication_, "all_reduce_async");
    cuda::record_stream(t, communication_);  // t's bytes are not reused before the collective is done
    cuda::Event done;
    done.record(communication_);
    return std::make_unique<NcclWork>(std::move(done), device_);
  }

 private:
  void all_reduce_on(const Tensor& t, ReduceOp op, const cuda::Stream& stream, const char* collective) {
    if (t.numel() == 0) return;
    check_nccl(ncclAllReduce(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()), nccl_type(t.dtype()),
                             nccl_op(op), comm_, handle(stream)),
               "ncclAllReduce", collective, comm_);
    if (op == ReduceOp::average && !kHasAverage) {
      cuda::StreamGuard on(stream);
      kernels::mul_scalar_(t, 1.0 / size());
    }
  }

  void check_device(const Tensor& t, const char* collective) const {
    EMBER_CHECK(t.device() == device_, collective << ": " << t.shape() << " is on " << t.device()
                                                  << ", and this rank's NCCL communicator is on " << device_
                                                  << " (the device of its first CUDA collective): one GPU per rank");
  }

  ProcessGroup& bootstrap_;
  Device device_;
  ncclComm_t comm_ = nullptr;
  cuda::Stream communication_;
};

}  // namespace

std::unique_ptr<ProcessGroup> make_nccl_process_group(ProcessGroup& bootstrap, const Device& device) {
  return std::make_unique<NcclProcessGroup>(bootstrap, device);
}

#else  // built without NCCL

bool built_with_nccl() { return false; }

std::unique_ptr<ProcessGroup> make_nccl_process_group(ProcessGroup&, const Device& device) {
  EMBER_THROW("dist: collectives on " << device << " tensors need NCCL, and this ember was built without it: "
                                      << "build with the CUDA backend where nccl.h and libnccl.so are found "
                                      << "(EMBER_NCCL; NCCL_ROOT names its folder)");
}

#endif

}  // namespace ember::dist
