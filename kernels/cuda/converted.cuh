#pragma once
// Internal to kernels/cuda/: a converted copy for the backend functions that still widen
// f16 themselves (conv, batch norm), allocated under the caller's op name and category.
//
//   const Tensor x32 = converted(x, DType::f32);   // x itself when already f32
#include "core/tensor.h"

namespace ember::kernels::cuda {

Tensor converted(const Tensor& t, DType dtype);

}  // namespace ember::kernels::cuda
