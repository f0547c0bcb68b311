// The cuBLAS GEMM provider (EMBER_GEMM=cublas).
//
// Handles: one per device, created on first use under a lock and kept for the
// life of the process (never destroyed: at exit the CUDA context may already be
// gone, the same reason PyTorch leaks its handles). A handle is shared by every
// thread, so each call holds that device's mutex while it binds the stream and
// enqueues the GEMM (enqueueing is asynchronous, the lock is short).
//
// Workspace: cuBLAS would otherwise cudaMalloc its own scratch, invisible to the
// memory report. We give each handle cuBLAS's recommended size (32 MiB on Hopper
// and newer, 4 MiB before) from ember::empty under MemoryCategory::workspace, so
// the report shows it. cublasSetStream resets the workspace, so both are bound
// together whenever the stream changes.
//
// Row-major through column-major: cuBLAS reads a row-major [r, c] matrix as the
// column-major [c, r] matrix, its transpose. So we ask it for
//   C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m)
// which lands in memory as the row-major C. Precision: f32 uses
// CUBLAS_COMPUTE_32F (full fp32, no TF32, like our kernel), f16 stores
// CUDA_R_16F with fp32 accumulation (tensor cores), f64 CUBLAS_COMPUTE_64F.
#include <cublas_v2.h>

#include <map>
#include <memory>
#include <mutex>

#include "core/cuda_runtime.h"
#include "kernels/cuda/cublas_gemm.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "memory/scopes.h"
#include "memory/empty.h"

#define EMBER_CUBLAS_CHECK(call)                                                                  \
  do {                                                                                            \
    const cublasStatus_t ember_cublas_status_ = (call);                                           \
    EMBER_CHECK(ember_cublas_status_ == CUBLAS_STATUS_SUCCESS,                                    \
                #call << " failed: " << cublasGetStatusString(ember_cublas_status_));             \
  } while (0)

namespace ember::kernels::cuda {

namespace {

constexpr size_t kHopperWorkspaceBytes = size_t{32} << 20;
constexpr size_t kOlderWorkspaceBytes = size_t{4} << 20;

struct CublasContext {
  std::mutex mutex;  // guards the handle's stream/workspace binding and its calls
  cublasHandle_t handle = nullptr;
  Tensor workspace;  // [bytes] u8, MemoryCategory::workspace
  cudaStream_t bound_stream = nullptr;
  bool bound = false;
};


std::unique_ptr<CublasContext> create_context(const Device& device) {
  ::ember::cuda::DeviceGuard device_guard(device);
  auto context = std::make_unique<CublasContext>();
  int major = 0;
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device.index));
  const size_t bytes = major >= 9 ? kHopperWorkspaceBytes : kOlderWorkspaceBytes;
  {
    CategoryScope category(MemoryCategory::workspace);
    OpNameScope op("cublas workspace");
    context->workspace = empty(Shape{static_cast<int64_t>(bytes)}, TensorOptions().dtype(DType::u8).device(device));
  }
  EMBER_CUBLAS_CHECK(cublasCreate(&context->handle));
  return context;
}

CublasContext& context_for(const Device& device) {
  static std::mutex registry_mutex;
  // Leaked on purpose (see the top of the file): contexts live as long as the process.
  static auto* contexts = new std::map<int, std::unique_ptr<CublasContext>>();
  std::lock_guard<std::mutex> lock(registry_mutex);
  std::unique_ptr<CublasContext>& slot = (*contexts)[device.index];
  if (!slot) slot = create_context(device);
  return *slot;
}

struct CublasTypes {
  cudaDataType storage;
  cublasComputeType_t compute;
};

CublasTypes cublas_types(DType dtype) {
  switch (dtype) {
    case DType::f32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::f16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case DType::f64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    default: break;
  }
  EMBER_THROW("matmul (cublas): unsupported dtype " << dtype << " (expected f32, f16 or f64)");
}

}  // namespace

void cublas_gemm(const GemmProblem& p, DType dtype, const void* a, const void* b, void* c, Device device) {
  const CublasTypes types = cublas_types(dtype);
  // alpha and beta have the compute type's width: double for f64, float otherwise.
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const double alpha_d = 1.0, beta_d = 0.0;
  const void* alpha = dtype == DType::f64 ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = dtype == DType::f64 ? static_cast<const void*>(&beta_d) : &beta_f;

  // Leading dimensions are the row lengths of the row-major storage.
  const int64_t lda = p.transpose_a ? p.m : p.k;
  const int64_t ldb = p.transpose_b ? p.k : p.n;
  const cublasOperation_t op_a = p.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = p.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;

  CublasContext& context = context_for(device);
  std::lock_guard<std::mutex> lock(context.mutex);
  const cudaStream_t stream = current_stream();
  if (!context.bound || context.bound_stream != stream) {
    EMBER_CUBLAS_CHECK(cublasSetStream(context.handle, stream));
    EMBER_CUBLAS_CHECK(cublasSetWorkspace(context.handle, context.workspace.data_ptr(), context.workspace.nbytes()));
    context.bound_stream = stream;
    context.bound = true;
  }
  // Swapped operands: C^T = op(B)^T op(A)^T, so cuBLAS's (m, n) is our (n, m).
  EMBER_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(
      context.handle, op_b, op_a, p.n, p.m, p.k, alpha, b, types.storage, ldb, p.stride_b, a, types.storage, lda,
      p.stride_a, beta, c, types.storage, p.n, p.stride_c, p.batch, types.compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace ember::kernels::cuda
