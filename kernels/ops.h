#pragma once
// The kernel layer's entry points: plain computations on tensors, no autograd.
// Each function checks its arguments once (shapes, dtypes, devices; errors name
// the op and the shapes) and then dispatches on the device to kernels/cpu/ or
// kernels/cuda/, which implement the same list (kernels/backend_api.inc).
// Outputs are allocated through memory/empty.h.
#include <cstdint>

#include "core/generator.h"
#include "core/tensor.h"

namespace ember::kernels {

enum class UnaryOp : uint8_t { neg, exp, log, sqrt, relu, sigmoid, tanh, pow_scalar, abs };
enum class BinaryOp : uint8_t { add, sub, mul, div };
enum class ReduceOp : uint8_t { sum, mean, max };

const char* unary_op_name(UnaryOp op);
const char* binary_op_name(BinaryOp op);

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

#include "kernels/backend_api.inc"

}  // namespace ember::kernels
