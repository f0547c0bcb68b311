#include "kernels/conv_scratch_cuda.h"

#include <algorithm>
#include <vector>

#include "core/simulation.h"
#include "kernels/providers.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels {

CudaConvChunk cuda_conv_chunk(CudaConvPass pass, const Conv2dGeometry& g, int64_t element_bytes) {
  const int64_t columns = g.is_pointwise() ? 0 : g.col_rows() * g.col_cols();
  const int64_t per_image = pass == CudaConvPass::weight_grad ? columns + g.out_channels * g.col_rows() : columns;
  const int64_t fit = kCudaConvChunkBudgetBytes / std::max<int64_t>(1, per_image * element_bytes);
  return {std::clamp<int64_t>(fit, 1, std::max<int64_t>(1, g.batch)), per_image};
}

void simulate_cuda_conv_scratch(CudaConvPass pass, const Conv2dGeometry& g, DType dtype, const Device& device) {
  EMBER_CHECK(simulating(), "simulate_cuda_conv_scratch: only in a shape-only run");
  if (conv_provider() != ConvProvider::custom || g.col_rows() == 0) return;
  const auto scratch = [&](MemoryCategory category, int64_t elements, DType type) {
    CategoryScope scope(category);
    return empty(Shape{elements}, TensorOptions(type).device(device));
  };
  std::vector<Tensor> held;  // all live until the call returns, as in the backend
  DType work = dtype;
  if (pass != CudaConvPass::forward && dtype == DType::f16) {
    // kernels/cuda/conv2d.cu: the f32 result, then f32 copies of the two operands.
    const Shape x{g.batch, g.in_channels, g.in_h, g.in_w}, y{g.batch, g.out_channels, g.out_h, g.out_w};
    const Shape w{g.out_channels, g.in_channels, g.kernel_h, g.kernel_w};
    const Shape result = pass == CudaConvPass::input_grad ? x : w;
    for (const Shape& s : {result, y, pass == CudaConvPass::input_grad ? w : x})
      held.push_back(scratch(MemoryCategory::temporary, s.numel(), DType::f32));
    work = DType::f32;
  }
  const int64_t bytes = static_cast<int64_t>(dtype_size(work));
  const int64_t elements = cuda_conv_chunk(pass, g, bytes).elements();
  if (elements > 0) held.push_back(scratch(MemoryCategory::workspace, elements, work));
}

}  // namespace ember::kernels
