#pragma once
// The checks every test uses (bounds derived from a computation are tests/support/error_bound.h;
// the op contract, which runs every op on every device, is tests/ops/):
//   expect_close(actual, expected, tol, "op")   -- names the op, worst index, both values, tolerance
//   expect_gradcheck(fn, inputs, "op")          -- fp64 central differences vs autograd
//   expect_error_contains(fn, {"op", "[2, 3]"}) -- the error text names what it must
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "kernels/factories.h"

namespace ember::test {

// Compares element by element in fp64: |a - e| <= tol * (1 + |e|); NaN matches NaN, inf the same inf.
void expect_close(const Tensor& actual, const Tensor& expected, double tol, const std::string& op);
void expect_values(const Tensor& actual, const std::vector<double>& expected, double tol, const std::string& op);
void expect_gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, const std::string& op,
                      GradcheckOptions options = {});
// fn must throw ember::Error whose message contains every fragment.
void expect_error_contains(const std::function<void()>& fn, const std::vector<std::string>& fragments);

}  // namespace ember::test

