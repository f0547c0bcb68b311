// The cuDNN conv2d provider (EMBER_CONV=cudnn), through cuDNN 9's legacy
// convolution API (libcudnn_cnn).
//
// Handles: one per device, created on first use and kept for the life of the
// process (never destroyed: at exit the CUDA context may already be gone, as in
// kernels/cuda/cublas_gemm.cu). Each call holds its device's mutex while it binds
// the stream, chooses the algorithm and enqueues the convolution.
//
// Descriptors are built per call (cheap host structs, RAII so an error path
// leaks nothing). The algorithm is the first of cudnnGet*Algorithm_v7's
// heuristic ranking whose status is success and whose workspace, asked again with
// cudnnGet*WorkspaceSize for the math type we actually run, fits
// kCudnnWorkspaceCapBytes. It is chosen once per direction, dtype and geometry on
// each device and kept (as PyTorch keeps its cuDNN choices): the ranking is a host
// query of the heuristics engine on every call otherwise, and on the first GPU run
// (an H200) the cuDNN provider's LeNet-5 step took 4.4x ember's kernels' (2.9 ms
// against 0.65 ms for six small convolutions), which that query is the suspect for.
//
// Precision: f32 runs with CUDNN_FMA_MATH (full fp32 like our kernels and the
// cuBLAS provider; the default math would allow TF32 on Ampere and newer), so
// f32 candidates ranked with tensor-op math are skipped. f16 stores
// CUDNN_DATA_HALF and computes in float, in the math type the ranking names; f64
// is double throughout.
//
// Workspace: allocated per call with ember::empty under MemoryCategory::workspace
// and released when the call returns (the caching allocator reuses the block in
// stream order), so the memory report shows what cuDNN asked for.
#include <cudnn.h>

#include <array>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/cuda_runtime.h"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/cudnn_conv.cuh"
#include "memory/scopes.h"
#include "memory/empty.h"

#define EMBER_CUDNN_CHECK(call)                                                                   \
  do {                                                                                            \
    const cudnnStatus_t ember_cudnn_status_ = (call);                                             \
    EMBER_CHECK(ember_cudnn_status_ == CUDNN_STATUS_SUCCESS,                                      \
                #call << " failed: " << cudnnGetErrorString(ember_cudnn_status_));                \
  } while (0)

namespace ember::kernels::cuda {

namespace {

// ---- handles ----

// What a chosen algorithm is remembered by: the direction, the dtype and the geometry.
struct ChoiceKey {
  int direction;
  DType dtype;
  std::array<int64_t, 15> geometry;
  bool operator<(const ChoiceKey& o) const {
    return std::tie(direction, dtype, geometry) < std::tie(o.direction, o.dtype, o.geometry);
  }
};

ChoiceKey choice_key(int direction, DType dtype, const Conv2dGeometry& g) {
  return {direction, dtype, {g.batch, g.in_channels, g.in_h, g.in_w, g.out_channels, g.kernel_h, g.kernel_w, g.out_h,
                             g.out_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w}};
}

// A direction's algorithm as an int, the math type it runs with and its workspace.
struct ChosenAlgorithm {
  int algo;
  cudnnMathType_t math;
  size_t workspace_bytes;
};

struct CudnnContext {
  std::mutex mutex;  // guards the handle's stream binding and its calls, and `chosen`
  cudnnHandle_t handle = nullptr;
  std::map<ChoiceKey, ChosenAlgorithm> chosen;
};

std::unique_ptr<CudnnContext> create_context(const Device& device) {
  auto context = std::make_unique<CudnnContext>();
  cudnnStatus_t status;
  {
    ::ember::cuda::DeviceGuard device_guard(device);  // cudnnCreate binds the current device
    status = cudnnCreate(&context->handle);
  }
  EMBER_CUDNN_CHECK(status);
  return context;
}

CudnnContext& context_for(const Device& device) {
  static std::mutex registry_mutex;
  // Leaked on purpose (see the top of the file): contexts live as long as the process.
  static auto* contexts = new std::map<int, std::unique_ptr<CudnnContext>>();
  std::lock_guard<std::mutex> lock(registry_mutex);
  std::unique_ptr<CudnnContext>& slot = (*contexts)[device.index];
  if (!slot) slot = create_context(device);
  return *slot;
}

// ---- types ----

struct CudnnTypes {
  cudnnDataType_t storage;
  cudnnDataType_t compute;
};

CudnnTypes cudnn_types(DType dtype, const char* op) {
  switch (dtype) {
    case DType::f32: return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT};
    case DType::f16: return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    case DType::f64: return {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE};
    default: break;
  }
  EMBER_THROW(op << " (cudnn): unsupported dtype " << dtype << " (expected f32, f16 or f64)");
}

// Sets *run to the math type a ranked candidate runs with; false when an f32 candidate needs tensor ops.
bool usable_math(DType dtype, cudnnMathType_t ranked, cudnnMathType_t* run) {
  if (dtype != DType::f32) {
    *run = ranked;
    return true;
  }
  *run = CUDNN_FMA_MATH;
  return ranked == CUDNN_FMA_MATH || ranked == CUDNN_DEFAULT_MATH;
}

// alpha = 1, beta = 0 in the compute type's width: double for f64, float otherwise.
struct Scales {
  float one_f = 1.0f, zero_f = 0.0f;
  double one_d = 1.0, zero_d = 0.0;
  bool wide;
  explicit Scales(DType dtype) : wide(dtype == DType::f64) {}
  const void* one() const { return wide ? static_cast<const void*>(&one_d) : &one_f; }
  const void* zero() const { return wide ? static_cast<const void*>(&zero_d) : &zero_f; }
};

// ---- descriptors ----

int narrow(int64_t v, const char* op) {
  EMBER_CHECK(v >= 0 && v <= INT_MAX, op << " (cudnn): size " << v << " does not fit cuDNN's int");
  return static_cast<int>(v);
}

class TensorDescriptor {
 public:
  TensorDescriptor() { EMBER_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc_)); }
  ~TensorDescriptor() { cudnnDestroyTensorDescriptor(desc_); }  // never throws
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;
  void set(cudnnDataType_t type, int64_t n, int64_t c, int64_t h, int64_t w, const char* op) {
    EMBER_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, type, narrow(n, op), narrow(c, op),
                                                 narrow(h, op), narrow(w, op)));
  }
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

class FilterDescriptor {
 public:
  FilterDescriptor() { EMBER_CUDNN_CHECK(cudnnCreateFilterDescriptor(&desc_)); }
  ~FilterDescriptor() { cudnnDestroyFilterDescriptor(desc_); }
  FilterDescriptor(const FilterDescriptor&) = delete;
  FilterDescriptor& operator=(const FilterDescriptor&) = delete;
  void set(cudnnDataType_t type, const Conv2dGeometry& g, const char* op) {
    EMBER_CUDNN_CHECK(cudnnSetFilter4dDescriptor(desc_, type, CUDNN_TENSOR_NCHW, narrow(g.out_channels, op),
                                                 narrow(g.in_channels, op), narrow(g.kernel_h, op),
                                                 narrow(g.kernel_w, op)));
  }
  cudnnFilterDescriptor_t get() const { return desc_; }

 private:
  cudnnFilterDescriptor_t desc_ = nullptr;
};

class ConvolutionDescriptor {
 public:
  ConvolutionDescriptor() { EMBER_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&desc_)); }
  ~ConvolutionDescriptor() { cudnnDestroyConvolutionDescriptor(desc_); }
  ConvolutionDescriptor(const ConvolutionDescriptor&) = delete;
  ConvolutionDescriptor& operator=(const ConvolutionDescriptor&) = delete;
  void set(cudnnDataType_t compute, const Conv2dGeometry& g, const char* op) {
    // Cross-correlation: PyTorch's (and our CPU's) convolution does not flip the kernel.
    EMBER_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(desc_, narrow(g.pad_h, op), narrow(g.pad_w, op),
                                                      narrow(g.stride_h, op), narrow(g.stride_w, op),
                                                      narrow(g.dilation_h, op), narrow(g.dilation_w, op),
                                                      CUDNN_CROSS_CORRELATION, compute));
  }
  cudnnConvolutionDescriptor_t get() const { return desc_; }

 private:
  cudnnConvolutionDescriptor_t desc_ = nullptr;
};

// x (or dx) [N, C, H, W], w (or dw) [OC, C, KH, KW], y (or dy) [N, OC, OH, OW], and the convolution.
struct ConvDescriptors {
  cudnnHandle_t handle;
  TensorDescriptor x, y;
  FilterDescriptor w;
  ConvolutionDescriptor conv;

  ConvDescriptors(cudnnHandle_t h, DType dtype, const Conv2dGeometry& g, const char* op) : handle(h) {
    // cuDNN's legacy API indexes each tensor with a 32-bit int.
    const int64_t sizes[] = {g.batch * g.in_channels * g.in_plane(), g.batch * g.out_channels * g.col_cols(),
                             g.out_channels * g.col_rows()};
    for (int64_t n : sizes)
      EMBER_CHECK(n <= INT_MAX, op << " (cudnn): a tensor of " << n << " elements is over cuDNN's 2^31 limit");
    const CudnnTypes types = cudnn_types(dtype, op);
    x.set(types.storage, g.batch, g.in_channels, g.in_h, g.in_w, op);
    y.set(types.storage, g.batch, g.out_channels, g.out_h, g.out_w, op);
    w.set(types.storage, g, op);
    conv.set(types.compute, g, op);
  }
};

// ---- the three directions, as traits over one algorithm chooser ----

struct Forward {
  static constexpr ConvDirection kDirection = ConvDirection::forward;
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) { return cudnnGetConvolutionForwardAlgorithmMaxCount(h, n); }
  static cudnnStatus_t rank(const ConvDescriptors& d, int requested, int* returned, Perf* perfs) {
    return cudnnGetConvolutionForwardAlgorithm_v7(d.handle, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), requested,
                                                  returned, perfs);
  }
  static cudnnStatus_t workspace(const ConvDescriptors& d, Algo algo, size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(d.handle, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), algo,
                                                   bytes);
  }
};

struct BackwardData {
  static constexpr ConvDirection kDirection = ConvDirection::backward_data;
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) {
    return cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t rank(const ConvDescriptors& d, int requested, int* returned, Perf* perfs) {
    return cudnnGetConvolutionBackwardDataAlgorithm_v7(d.handle, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                       requested, returned, perfs);
  }
  static cudnnStatus_t workspace(const ConvDescriptors& d, Algo algo, size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(d.handle, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                        algo, bytes);
  }
};

struct BackwardFilter {
  static constexpr ConvDirection kDirection = ConvDirection::backward_filter;
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) {
    return cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t rank(const ConvDescriptors& d, int requested, int* returned, Perf* perfs) {
    return cudnnGetConvolutionBackwardFilterAlgorithm_v7(d.handle, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
                                                         requested, returned, perfs);
  }
  static cudnnStatus_t workspace(const ConvDescriptors& d, Algo algo, size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(d.handle, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
                                                          algo, bytes);
  }
};

template <class Direction>
struct Choice {
  typename Direction::Algo algo;
  size_t workspace_bytes;
};

// Ranks the candidates: the first that runs in a usable math type within the workspace cap.
// Leaves d.conv set to its math type.
template <class Direction>
ChosenAlgorithm rank_algorithms(const ConvDescriptors& d, DType dtype, const Conv2dGeometry& g, const char* op) {
  int max_count = 0;
  EMBER_CUDNN_CHECK(Direction::max_count(d.handle, &max_count));
  std::vector<typename Direction::Perf> perfs(static_cast<size_t>(max_count > 0 ? max_count : 1));
  int returned = 0;
  EMBER_CUDNN_CHECK(Direction::rank(d, static_cast<int>(perfs.size()), &returned, perfs.data()));
  for (int i = 0; i < returned; ++i) {
    const auto& perf = perfs[static_cast<size_t>(i)];
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    if (perf.status != CUDNN_STATUS_SUCCESS || !usable_math(dtype, perf.mathType, &math)) continue;
    EMBER_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv.get(), math));
    size_t bytes = 0;
    const cudnnStatus_t status = Direction::workspace(d, perf.algo, &bytes);
    if (status != CUDNN_STATUS_SUCCESS || bytes > kCudnnWorkspaceCapBytes) continue;
    return {static_cast<int>(perf.algo), math, bytes};
  }
  EMBER_THROW(op << " (cudnn): no algorithm for input [" << g.batch << ", " << g.in_channels << ", " << g.in_h << ", "
                 << g.in_w << "], weight [" << g.out_channels << ", " << g.in_channels << ", " << g.kernel_h << ", "
                 << g.kernel_w << "], " << dtype << " fits the " << (kCudnnWorkspaceCapBytes >> 20)
                 << " MiB workspace cap (" << returned << " ranked)");
}

Tensor workspace_tensor(size_t bytes, const Device& device) {
  if (bytes == 0) return Tensor();
  CategoryScope category(MemoryCategory::workspace);
  return empty(Shape{static_cast<int64_t>(bytes)}, TensorOptions().dtype(DType::u8).device(device));
}

void* workspace_data(const Tensor& workspace) { return workspace.defined() ? workspace.data_ptr() : nullptr; }

// The direction's algorithm for d's geometry, ranked on the first call and remembered in
// `context` (whose mutex the caller holds); leaves d.conv set to its math type.
template <class Direction>
Choice<Direction> choose_algorithm(CudnnContext& context, const ConvDescriptors& d, DType dtype,
                                   const Conv2dGeometry& g, const char* op) {
  const ChoiceKey key = choice_key(static_cast<int>(Direction::kDirection), dtype, g);
  auto it = context.chosen.find(key);
  if (it == context.chosen.end()) {
    it = context.chosen.emplace(key, rank_algorithms<Direction>(d, dtype, g, op)).first;
  } else {
    EMBER_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv.get(), it->second.math));
  }
  return {static_cast<typename Direction::Algo>(it->second.algo), it->second.workspace_bytes};
}

// Chooses the algorithm for one direction under the device's lock; when `execute`, allocates its
// workspace and calls run(descriptors, choice, workspace pointer, scales), still under the lock.
template <class Direction, class Run>
Choice<Direction> with_algorithm(const Device& device, DType dtype, const Conv2dGeometry& g, const char* op,
                                 const Run& run, bool execute = true) {
  CudnnContext& context = context_for(device);
  std::lock_guard<std::mutex> lock(context.mutex);
  EMBER_CUDNN_CHECK(cudnnSetStream(context.handle, current_stream()));
  const ConvDescriptors d(context.handle, dtype, g, op);
  const Choice<Direction> choice = choose_algorithm<Direction>(context, d, dtype, g, op);
  if (execute) {
    const Tensor workspace = workspace_tensor(choice.workspace_bytes, device);
    run(d, choice, workspace_data(workspace), Scales(dtype));
  }
  return choice;
}

template <class Direction>
CudnnConvPlan plan_for(DType dtype, const Conv2dGeometry& g, const Device& device) {
  const auto nothing = [](const ConvDescriptors&, const Choice<Direction>&, void*, const Scales&) {};
  const Choice<Direction> c = with_algorithm<Direction>(device, dtype, g, "conv2d (plan)", nothing, false);
  CudnnConvPlan plan;
  plan.algorithm = static_cast<int>(c.algo);
  plan.workspace_bytes = c.workspace_bytes;
  return plan;
}

}  // namespace

void cudnn_conv2d_forward(const Tensor& x, const Tensor& weight, const Tensor& y, const Conv2dGeometry& g) {
  const auto run = [&](const ConvDescriptors& d, const Choice<Forward>& c, void* ws, const Scales& s) {
    EMBER_CUDNN_CHECK(cudnnConvolutionForward(d.handle, s.one(), d.x.get(), x.data_ptr(), d.w.get(),
                                              weight.data_ptr(), d.conv.get(), c.algo, ws, c.workspace_bytes,
                                              s.zero(), d.y.get(), y.data_ptr()));
  };
  with_algorithm<Forward>(x.device(), x.dtype(), g, "conv2d", run);
}

void cudnn_conv2d_backward_data(const Tensor& dy, const Tensor& weight, const Tensor& dx, const Conv2dGeometry& g) {
  const auto run = [&](const ConvDescriptors& d, const Choice<BackwardData>& c, void* ws, const Scales& s) {
    EMBER_CUDNN_CHECK(cudnnConvolutionBackwardData(d.handle, s.one(), d.w.get(), weight.data_ptr(), d.y.get(),
                                                   dy.data_ptr(), d.conv.get(), c.algo, ws, c.workspace_bytes,
                                                   s.zero(), d.x.get(), dx.data_ptr()));
  };
  with_algorithm<BackwardData>(dy.device(), dy.dtype(), g, "conv2d_backward_input", run);
}

void cudnn_conv2d_backward_filter(const Tensor& x, const Tensor& dy, const Tensor& dw, const Conv2dGeometry& g) {
  const auto run = [&](const ConvDescriptors& d, const Choice<BackwardFilter>& c, void* ws, const Scales& s) {
    EMBER_CUDNN_CHECK(cudnnConvolutionBackwardFilter(d.handle, s.one(), d.x.get(), x.data_ptr(), d.y.get(),
                                                     dy.data_ptr(), d.conv.get(), c.algo, ws, c.workspace_bytes,
                                                     s.zero(), d.w.get(), dw.data_ptr()));
  };
  with_algorithm<BackwardFilter>(x.device(), x.dtype(), g, "conv2d_backward_weight", run);
}

CudnnConvPlan cudnn_conv2d_plan(ConvDirection direction, DType dtype, const Conv2dGeometry& g, Device device) {
  switch (direction) {
    case ConvDirection::forward: return plan_for<Forward>(dtype, g, device);
    case ConvDirection::backward_data: return plan_for<BackwardData>(dtype, g, device);
    case ConvDirection::backward_filter: return plan_for<BackwardFilter>(dtype, g, device);
  }
  return CudnnConvPlan{};
}

}  // namespace ember::kernels::cuda
