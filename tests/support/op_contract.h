#pragma once
// The shared op-contract helpers every op test uses:
//   expect_close(actual, expected, tol, "op")   -- names the op, worst index, both values, tolerance
//   expect_gradcheck(fn, inputs, "op")          -- fp64 central differences vs autograd
//   expect_matches_cpu(fn, inputs, tol, "op")   -- runs fn on CPU and CUDA, compares
//   expect_error_contains(fn, {"op", "[2, 3]"}) -- the error text names what it must
//   EMBER_CUDA_TEST_CASE("name")               -- a test that needs a GPU (skipped without one)
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "core/cuda_runtime.h"
#include "kernels/factories.h"

namespace ember::test {

// Compares element by element in fp64: |a - e| <= tol * (1 + |e|).
void expect_close(const Tensor& actual, const Tensor& expected, double tol, const std::string& op);
void expect_values(const Tensor& actual, const std::vector<double>& expected, double tol, const std::string& op);
void expect_gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, const std::string& op,
                      GradcheckOptions options = {});
// Runs fn on the inputs as given (CPU) and on copies moved to cuda:0, compares outputs.
void expect_matches_cpu(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                        const std::vector<Tensor>& cpu_inputs, double tol, const std::string& op);
// fn must throw ember::Error whose message contains every fragment.
void expect_error_contains(const std::function<void()>& fn, const std::vector<std::string>& fragments);

}  // namespace ember::test

#define EMBER_CUDA_TEST_CASE(name, tags) TEST_CASE("cuda: " name, "[cuda]" tags)
