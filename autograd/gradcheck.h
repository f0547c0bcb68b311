#pragma once
// gradcheck: compares autograd's gradients with central differences, in fp64.
//
//   auto f = [](const std::vector<Tensor>& in) { return ember::sum(ember::tanh(in[0]) * in[1]); };
//   GradcheckResult r = gradcheck(f, {ember::randn({3, 4}, kFloat64), ember::randn({4}, kFloat64)});
//   REQUIRE(r.ok);   // r.message names the input, the worst index, both values and the tolerance
//
// Inputs are converted to f64 (on their device) and marked requires_grad; the
// function's output is reduced with a fixed random weighting if it is not a scalar.
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ember {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  std::string message;  // empty when ok
};

using GradcheckFn = std::function<Tensor(const std::vector<Tensor>&)>;
GradcheckResult gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions options = {});

}  // namespace ember
