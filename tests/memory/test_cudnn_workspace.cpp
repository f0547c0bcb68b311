// cuDNN's scratch is allocated through ember's allocator as workspace memory, and released
// when the call returns. Needs a GPU.
#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "core/cuda_runtime.h"
#include "kernels/ops.h"
#include "kernels/providers.h"
#include "memory/memory.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"
#ifdef EMBER_HAVE_CUDA
#include "kernels/cuda/cudnn_conv.cuh"
#endif

using namespace ember;


#ifdef EMBER_HAVE_CUDA
EMBER_CUDA_TEST_CASE("cudnn's workspace is counted as workspace memory", "[conv2d][cudnn][memory]") {
  kernels::ProviderScope vendor(kernels::gemm_provider(), kernels::ConvProvider::cudnn);
  const kernels::Conv2dArgs args;  // stride 1, no padding
  const Shape x_shape{16, 32, 40, 40}, w_shape{64, 32, 5, 5};
  const kernels::Conv2dGeometry g = kernels::conv2d_geometry(x_shape, w_shape, args, "test");
  const Tensor x = randn(x_shape).to(kCUDA), w = randn(w_shape).to(kCUDA);
  const Tensor dy = randn({g.batch, g.out_channels, g.out_h, g.out_w}).to(kCUDA);
  const auto workspace_stat = [] {
    return memory_stats(kCUDA).by_category[static_cast<size_t>(MemoryCategory::workspace)];
  };
  using kernels::cuda::ConvDirection;
  const std::vector<std::pair<ConvDirection, std::function<Tensor()>>> calls = {
      {ConvDirection::forward, [&] { return kernels::conv2d(x, w, Tensor(), args); }},
      {ConvDirection::backward_data, [&] { return kernels::conv2d_backward_input(dy, w, x_shape, args); }},
      {ConvDirection::backward_filter, [&] { return kernels::conv2d_backward_weight(x, dy, w_shape, args); }},
  };
  size_t most = 0;
  for (const auto& [direction, call] : calls) {
    const kernels::cuda::CudnnConvPlan plan = kernels::cuda::cudnn_conv2d_plan(direction, kFloat32, g, kCUDA);
    INFO("direction " << static_cast<int>(direction) << ": algorithm " << plan.algorithm << ", workspace "
                      << plan.workspace_bytes << " bytes");
    reset_peak_stats(kCUDA);
    const int64_t before = workspace_stat().current;
    const Tensor out = call();
    cuda::synchronize();
    CHECK(workspace_stat().peak - before >= static_cast<int64_t>(plan.workspace_bytes));
    CHECK(workspace_stat().current == before);  // released when the call returned
    most = std::max(most, plan.workspace_bytes);
  }
  // A 5x5 kernel over 32 channels: cuDNN's favourites (implicit precomputed GEMM, FFT,
  // Winograd) need scratch in at least one direction, so the checks above saw real bytes.
  CHECK(most > 0);
}
#endif
