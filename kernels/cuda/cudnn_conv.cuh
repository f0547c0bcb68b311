#pragma once
// The cuDNN provider of conv2d (EMBER_CONV=cudnn, kernels/providers.h). conv2d.cu
// calls it after checking shapes and allocating the (non-empty) outputs:
//
//   cudnn_conv2d_forward(x, weight, y, g);          // y = conv(x, weight), bias added by the caller
//   cudnn_conv2d_backward_data(dy, weight, dx, g);  // dx, the input gradient
//   cudnn_conv2d_backward_filter(x, dy, dw, g);     // dw, the weight gradient
//
// Contiguous NCHW tensors on one GPU; f32 (full fp32, no TF32), f16 (fp32 compute) or
// f64. The algorithm is cuDNN's heuristic favourite whose workspace fits
// kCudnnWorkspaceCapBytes; the workspace comes from ember::empty as
// MemoryCategory::workspace, so the memory report shows it. cudnn_conv2d_plan says
// which algorithm and how many workspace bytes a call will use (benchmarks, tests).
#include <cstddef>

#include "core/tensor.h"
#include "kernels/conv_geometry.h"

namespace ember::kernels::cuda {

inline constexpr size_t kCudnnWorkspaceCapBytes = size_t{256} << 20;

enum class ConvDirection { forward, backward_data, backward_filter };

struct CudnnConvPlan {
  int algorithm = 0;           // the cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t value
  size_t workspace_bytes = 0;  // 0 when the algorithm needs none
};

void cudnn_conv2d_forward(const Tensor& x, const Tensor& weight, const Tensor& y, const Conv2dGeometry& g);
void cudnn_conv2d_backward_data(const Tensor& dy, const Tensor& weight, const Tensor& dx, const Conv2dGeometry& g);
void cudnn_conv2d_backward_filter(const Tensor& x, const Tensor& dy, const Tensor& dw, const Conv2dGeometry& g);

CudnnConvPlan cudnn_conv2d_plan(ConvDirection direction, DType dtype, const Conv2dGeometry& g, Device device);

}  // namespace ember::kernels::cuda
