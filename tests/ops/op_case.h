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
//     within the case's error model (below, tests/support/error_bound.h): a bound derived from the
//     longest sum, the roundings on the way and each element's magnitude;
//   - gradcheck (fp64 central differences) passes on that device, for small differentiable cases.
// Ember tensors are always contiguous, so the "view" edge case is a tensor that starts inside
// its storage (rows 1.. of a bigger one, InputSpec::row_view), and the guard bytes give every
// op output a storage offset as well.
// The bounds hold for every summation order (any BLAS kernel, thread split or GPU reduction), so
// for long sums they are loose in f32 and f16; the f64 run of the same case, whose bound is 2^29
// times tighter, is what catches a dropped or doubled term, and the f32 and f16 runs catch a sum
// kept in too narrow a precision (an f16 sum of a thousand terms is off by far more than its bound).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "core/tensor.h"
#include "kernels/factories.h"
#include "tests/support/error_bound.h"

namespace ember::test {

using Inputs = std::vector<Tensor>;
using OpFn = std::function<Tensor(const Inputs&)>;

enum class Values {
  normal,          // N(0, 1)
  away_from_zero,  // |x| in [0.25, 2], either sign: kinks (relu, abs) stay out of gradcheck's reach
  positive,        // [0.25, 2]: log, sqrt, pow, divisors
  labels,          // i64 in [0, label_limit)
  integers,        // whole numbers in [0, 200): exact in every dtype, u8 included
  probability,     // [0.05, 0.95]: binary cross entropy's inputs and targets
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

// Where an element's magnitude (tests/support/error_bound.h) comes from:
enum class Magnitude {
  // For ops that are not sums of products of their inputs: |want| + 1 for y (the draws are O(1),
  // so the 1 stands for the size of the terms where the result cancels or is near 0), and
  // |want| + max |w| for a gradient (w times a derivative whose own terms are O(1)).
  of_result,
  // sum |terms|, exactly: the op run in fp64 on |inputs| (and backward from |w|). Right for ops
  // whose every output and gradient is a sum of products or quotients of inputs, none of which
  // cancels inside itself (matmul, conv, sums, pooling, broadcast arithmetic).
  of_terms,
};
// A case's own magnitudes, where neither kind above is exact: the softmax family's gradients,
// and algorithms whose terms are not the op's (Winograd's transforms). Given the reference's
// fp64 inputs, the w its backward was given (undefined without one) and the magnitudes of the
// case's kind, returns the magnitudes to use: y's first, then one per input (undefined where
// the input has no gradient).
using MagnitudeFn = std::function<std::vector<Tensor>(const Inputs& inputs, const Tensor& w, std::vector<Tensor> of_kind)>;

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
  // How far the tested run may land from the reference, per element, for y and every gradient
  // (tests/support/error_bound.h). The default is an elementwise op: no sum; 8 roundings in the
  // compute precision (a library function of up to 4 ulps, or a few operations, and as many again
  // in the backward: w times the derivative); 2 roundings to the dtype (the result, and the saved
  // output a backward may read).
  ErrorModel error{0, 8, 2};
  Magnitude magnitude = Magnitude::of_result;
  MagnitudeFn magnitude_fn;  // refines the kind's magnitudes when set
  bool backward = true;   // y.backward(w) and the input gradients are compared
  bool gradcheck = true;  // fp64 central differences too, when the inputs are small (not at ties or NaNs)
  Reference reference = Reference::cpu_f64;

  // Chainable adjustments: OpCase(...).sums(53).abs_magnitude().no_backward()
  // Each output or gradient element sums up to `terms` terms (the longest of y's and the gradients' sums).
  OpCase& sums(int64_t terms) {
    error.terms = terms;
    return *this;
  }
  OpCase& computed(int64_t roundings) {
    error.computed = roundings;
    return *this;
  }
  OpCase& stored(int64_t roundings) {
    error.stored = roundings;
    return *this;
  }
  // Every element must come out exactly: moves, casts, integer math, Philox draws.
  OpCase& exact() {
    error = ErrorModel{};
    return *this;
  }
  // Every output and gradient is a sum of products (or quotients) of the inputs: magnitudes from |inputs|.
  OpCase& abs_magnitude() {
    magnitude = Magnitude::of_terms;
    return *this;
  }
  OpCase& magnitudes(MagnitudeFn fn) {
    magnitude_fn = std::move(fn);
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
  // The reference is the CPU in the same dtype: both sides round, so a case that is not exact
  // counts the roundings of both.
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
std::vector<OpCase> loss_cases();
std::vector<ErrorCase> error_cases();

}  // namespace ember::test
