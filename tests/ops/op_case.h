#pragma once
// The op contract: one list of op cases (tests/ops/op_cases_*.cpp) that every backend runs
// (tests/ops/test_op_contract.cpp): the CPU always, CUDA with ember's kernels and with
// cuBLAS/cuDNN when a GPU is present. An op added to the list is tested on every device.
//
//   cases.push_back(OpCase("elementwise", "gelu [7, 3]", {In({7, 3})},
//                          [](const Inputs& in) { return ember::gelu(in[0]); }));
//
// For each backend and each dtype of the case, the runner builds the inputs from one fp64
// draw (so every dtype and device sees the same numbers, rounded to its dtype), runs the op
// and its backward (y.backward(w) with a fixed random w) inside a GuardBytesScope, and checks:
//   - no guard byte around any tensor the op allocated changed (memory/guard_bytes.h);
//   - y and every input gradient match the CPU computing in fp64 on the same rounded inputs,
//     within the case's tolerance for that dtype: |got - want| <= tol * (1 + |want|);
//   - gradcheck (fp64 central differences) passes on that device, for small differentiable cases.
// Ember tensors are always contiguous, so the "view" edge case is a tensor that starts inside
// its storage (rows 1.. of a bigger one, InputSpec::row_view), and the guard bytes give every
// op output a storage offset as well.
#include <functional>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "core/tensor.h"
#include "kernels/factories.h"

namespace ember::test {

using Inputs = std::vector<Tensor>;
using OpFn = std::function<Tensor(const Inputs&)>;

enum class Values {
  normal,          // N(0, 1)
  away_from_zero,  // |x| in [0.25, 2], either sign: kinks (relu, abs) stay out of gradcheck's reach
  positive,        // [0.25, 2]: log, sqrt, pow, divisors
  labels,          // i64 in [0, label_limit)
  integers,        // whole numbers in [0, 200): exact in every dtype, u8 included
};

struct InputSpec {
  Shape shape;
  Values values = Values::normal;
  int64_t label_limit = 0;
  bool row_view = false;  // the input is rows 1.. of a tensor one row taller (a storage offset)
  bool requires_grad = true;  // floating inputs only
};

// Shorthands for the lists: In({2, 3}), In({4}, Values::positive), Labels({8}, 5), RowsOf({5, 4}).
InputSpec In(const Shape& shape, Values values = Values::normal);
InputSpec Labels(const Shape& shape, int64_t classes);
InputSpec RowsOf(const Shape& shape, Values values = Values::normal);
InputSpec Constant(const Shape& shape, Values values = Values::normal);  // no gradient asked for

enum class Reference {
  cpu_f64,         // the CPU computing in fp64 on the same rounded inputs
  cpu_same_dtype,  // the CPU in the case's dtype: casts, random draws, integer math
};

struct OpCase {
  OpCase(std::string family, std::string name, std::vector<InputSpec> inputs, OpFn fn)
      : family(std::move(family)), name(std::move(name)), inputs(std::move(inputs)), fn(std::move(fn)) {}

  std::string family;  // which TEST_CASE runs it: elementwise, reduce, softmax, matmul, conv, pool, ...
  std::string name;    // says the op and the shapes
  std::vector<InputSpec> inputs;
  OpFn fn;
  // The dtypes the floating inputs take; integer inputs (labels, Values::integers cases with an
  // integer dtype) keep theirs.
  std::vector<DType> dtypes{DType::f64, DType::f32, DType::f16};
  double f32_tol = 1e-5;
  double f16_tol = 2e-3;
  bool backward = true;   // y.backward(w) and the input gradients are compared
  bool gradcheck = true;  // fp64 central differences too, when the inputs are small (not at ties or NaNs)
  Reference reference = Reference::cpu_f64;

  // Chainable adjustments: OpCase(...).tol(1e-4, 5e-3).no_backward()
  OpCase& tol(double f32, double f16) {
    f32_tol = f32;
    f16_tol = f16;
    return *this;
  }
  OpCase& no_backward() {
    backward = false;
    return *this;
  }
  OpCase& no_gradcheck() {
    gradcheck = false;
    return *this;
  }
  OpCase& only(std::vector<DType> only_dtypes) {
    dtypes = std::move(only_dtypes);
    return *this;
  }
  OpCase& against_same_dtype() {
    reference = Reference::cpu_same_dtype;
    return *this;
  }
};

// An input the op must refuse on every device, with an error naming what it must.
struct ErrorCase {
  std::string family;
  std::string name;
  std::function<void(Device)> fn;  // builds its inputs on the device and calls the op
  std::vector<std::string> fragments;
};

// The lists, one function per family file (tests/ops/op_cases_<family>.cpp).
std::vector<OpCase> elementwise_cases();
std::vector<OpCase> reduce_cases();
std::vector<OpCase> softmax_cases();
std::vector<OpCase> matmul_cases();
std::vector<OpCase> cnn_cases();
std::vector<OpCase> optimizer_cases();
std::vector<OpCase> shape_cases();
std::vector<ErrorCase> error_cases();

}  // namespace ember::test
