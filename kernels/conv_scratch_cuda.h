#pragma once
// The scratch ember's own CUDA convolution (kernels/cuda/conv2d.cu, EMBER_CONV=custom) takes,
// sized from the geometry alone: the convolution sizes its buffers here, and a shape-only run
// (core/simulation.h: `ember plan --device cuda`, no GPU needed) allocates the same bytes in the
// same categories, so a plan for the GPU sees them. cuDNN's workspace (EMBER_CONV=cudnn) is
// chosen by cuDNN on the device and is not simulated.
//
//   const CudaConvChunk chunk = cuda_conv_chunk(CudaConvPass::forward, g, sizeof(D));  // chunk.images per pass
//   if (simulating() && x.is_cuda()) simulate_cuda_conv_scratch(CudaConvPass::forward, g, x.dtype(), x.device());
#include <cstdint>

#include "core/device.h"
#include "core/dtype.h"
#include "kernels/conv_geometry.h"

namespace ember::kernels {

enum class CudaConvPass { forward, input_grad, weight_grad };

// A chunk's buffers stay under this, but hold at least one image.
inline constexpr int64_t kCudaConvChunkBudgetBytes = int64_t{64} << 20;

// A pass's workspace: `images` images at a time, `per_image` elements (of `element_bytes` each)
// for each: its columns, and for the weight gradient a partial dW too. per_image is 0 where the
// pass needs none (a 1x1 forward or input gradient reads the image as its columns).
struct CudaConvChunk {
  int64_t images;
  int64_t per_image;
  int64_t elements() const { return images * per_image; }
};
CudaConvChunk cuda_conv_chunk(CudaConvPass pass, const Conv2dGeometry& g, int64_t element_bytes);

// In a shape-only run, for a CUDA device under EMBER_CONV=custom: allocates and frees what the
// pass's backend call would beside its output: the workspace, and under f16 the backward's f32
// copies of its operands and result (temporary). Nothing under EMBER_CONV=cudnn.
void simulate_cuda_conv_scratch(CudaConvPass pass, const Conv2dGeometry& g, DType dtype, const Device& device);

}  // namespace ember::kernels
