// batch_norm: training normalisation and running statistics against values
// computed by hand (momentum 0.1, unbiased running variance), eval with the
// running statistics, gradcheck in both modes, f16 with fp32 statistics, the
// recompute guard, errors.
#include <cmath>
#include <string>
#include <vector>

#include "autograd/recompute_state.h"
#include "kernels/batch_norm_math.h"
#include "kernels/ops.h"
#include "tests/support/op_contract.h"

using namespace ember;
using test::expect_error_contains;
using test::expect_gradcheck;
using test::expect_values;

namespace {

constexpr double kEps = 1e-5;

// x [2, 2, 2, 1]: channel 0 holds {1, 2, 3, 4}, channel 1 holds {2, 4, 6, 8}
// (n-major: x[0,0] = {1, 2}, x[0,1] = {2, 4}, x[1,0] = {3, 4}, x[1,1] = {6, 8}).
Tensor first_batch() { return from_vector<float>({1, 2, 2, 4, 3, 4, 6, 8}, {2, 2, 2, 1}); }
// channel 0 holds {0, 0, 2, 6}, channel 1 holds {-1, 1, -1, 1}
Tensor second_batch() { return from_vector<float>({0, 0, -1, 1, 2, 6, -1, 1}, {2, 2, 2, 1}); }

// y for channel values v, in the order of first_batch's layout, normalised by (mean, var).
double normalised(double v, double mean, double var, double w, double b) { return (v - mean) / std::sqrt(var + kEps) * w + b; }

}  // namespace

TEST_CASE("batch_norm training normalises with the batch mean and biased variance", "[batchnorm]") {
  const Tensor w = from_vector<float>({2.0f, 0.5f}, {2});
  const Tensor b = from_vector<float>({1.0f, -1.0f}, {2});
  const Tensor y = batch_norm(first_batch(), w, b, Tensor(), Tensor(), /*training=*/true);
  // channel 0: mean 2.5, biased var 1.25; channel 1: mean 5, biased var 5
  const double m0 = 2.5, v0 = 1.25, m1 = 5, v1 = 5;
  expect_values(y,
                {normalised(1, m0, v0, 2, 1), normalised(2, m0, v0, 2, 1), normalised(2, m1, v1, 0.5, -1),
                 normalised(4, m1, v1, 0.5, -1), normalised(3, m0, v0, 2, 1), normalised(4, m0, v0, 2, 1),
                 normalised(6, m1, v1, 0.5, -1), normalised(8, m1, v1, 0.5, -1)},
                1e-6, "batch_norm train");
  // without affine parameters: plain standardisation
  const Tensor z = batch_norm(first_batch(), Tensor(), Tensor(), Tensor(), Tensor(), true);
  expect_values(mean(z.reshape({2, 2, 2}).transpose(0, 1).reshape({2, 4}), 1), {0, 0}, 1e-6, "batch_norm mean 0");
}

TEST_CASE("batch_norm running statistics follow momentum 0.1 with the unbiased variance", "[batchnorm]") {
  const Tensor running_mean = zeros({2}), running_var = ones({2});
  batch_norm(first_batch(), Tensor(), Tensor(), running_mean, running_var, true, 0.1);
  // step 1: mean (2.5, 5); unbiased var (5/3, 20/3)
  const double rm0 = 0.1 * 2.5, rm1 = 0.1 * 5, rv0 = 0.9 + 0.1 * 5.0 / 3, rv1 = 0.9 + 0.1 * 20.0 / 3;
  expect_values(running_mean, {rm0, rm1}, 1e-6, "running_mean after 1 step");
  expect_values(running_var, {rv0, rv1}, 1e-6, "running_var after 1 step");
  batch_norm(second_batch(), Tensor(), Tensor(), running_mean, running_var, true, 0.1);
  // step 2: channel 0 {0, 0, 2, 6}: mean 2, unbiased var (4+4+0+16)/3 = 8;
  //         channel 1 {-1, 1, -1, 1}: mean 0, unbiased var 4/3
  expect_values(running_mean, {0.9 * rm0 + 0.1 * 2, 0.9 * rm1}, 1e-6, "running_mean after 2 steps");
  expect_values(running_var, {0.9 * rv0 + 0.1 * 8, 0.9 * rv1 + 0.1 * 4.0 / 3}, 1e-6, "running_var after 2 steps");
  CHECK(running_mean.dtype() == kFloat32);
}

TEST_CASE("batch_norm updates f64 running statistics in double next to f32 and f16 input", "[batchnorm]") {
  // The update is batch_norm_running_update, in double whatever the dtypes (shared with CUDA):
  // 0.1, 0.3, 0.7 and 1.1 are not floats, so an update in float would be off by ~1e-8.
  for (DType dtype : {kFloat32, kFloat16}) {
    const Tensor running_mean = from_vector<double>({0.1, 0.3}, {2}), running_var = from_vector<double>({0.7, 1.1}, {2});
    batch_norm(first_batch().to(dtype), Tensor(), Tensor(), running_mean, running_var, true, 0.1);
    CHECK(running_mean.dtype() == kFloat64);
    CHECK(running_var.dtype() == kFloat64);
    // channel 0: mean 2.5, biased var 1.25; channel 1: mean 5, biased var 5 (exact in f16 too); M = 4
    expect_values(running_mean, {(1.0 - 0.1) * 0.1 + 0.1 * 2.5, (1.0 - 0.1) * 0.3 + 0.1 * 5.0}, 1e-15,
                  std::string("f64 running_mean next to ") + dtype_name(dtype));
    expect_values(running_var, {(1.0 - 0.1) * 0.7 + 0.1 * (1.25 * 4 / 3), (1.0 - 0.1) * 1.1 + 0.1 * (5.0 * 4 / 3)},
                  1e-15, std::string("f64 running_var next to ") + dtype_name(dtype));
  }
  // The shared function itself: a single value has no unbiased variance, its biased one (0) is kept.
  CHECK(kernels::batch_norm_running_update(1.0, 0.0, 0.5, true, 1) == 0.5);
  CHECK(kernels::batch_norm_running_update(0.1, 2.0, 0.1, true, 2) == (1.0 - 0.1) * 0.1 + 0.1 * 4.0);
}

TEST_CASE("batch_norm eval uses the running statistics and leaves them alone", "[batchnorm]") {
  const Tensor running_mean = from_vector<float>({1.0f, -2.0f}, {2});
  const Tensor running_var = from_vector<float>({4.0f, 0.25f}, {2});
  const Tensor w = from_vector<float>({2.0f, 0.5f}, {2});
  const Tensor b = from_vector<float>({1.0f, -1.0f}, {2});
  const Tensor y = batch_norm(first_batch(), w, b, running_mean, running_var, /*training=*/false);
  expect_values(y,
                {normalised(1, 1, 4, 2, 1), normalised(2, 1, 4, 2, 1), normalised(2, -2, 0.25, 0.5, -1),
                 normalised(4, -2, 0.25, 0.5, -1), normalised(3, 1, 4, 2, 1), normalised(4, 1, 4, 2, 1),
                 normalised(6, -2, 0.25, 0.5, -1), normalised(8, -2, 0.25, 0.5, -1)},
                1e-6, "batch_norm eval");
  expect_values(running_mean, {1, -2}, 0, "running_mean unchanged in eval");
  expect_values(running_var, {4, 0.25}, 0, "running_var unchanged in eval");
}

TEST_CASE("batch_norm gradients pass gradcheck", "[batchnorm][gradcheck]") {
  manual_seed(11);
  const Tensor x = randn({3, 2, 3, 2}, kFloat64, 0.5, 2.0);
  const Tensor w = rand({2}, kFloat64, 0.5, 1.5), b = randn({2}, kFloat64);
  expect_gradcheck([](auto& in) { return batch_norm(in[0], in[1], in[2], Tensor(), Tensor(), true); }, {x, w, b},
                   "batch_norm train");
  const Tensor x2d = randn({5, 3}, kFloat64);
  expect_gradcheck([](auto& in) { return batch_norm(in[0], Tensor(), Tensor(), Tensor(), Tensor(), true); }, {x2d},
                   "batch_norm train [N, C] without affine");
  const Tensor rm = randn({2}, kFloat64), rv = rand({2}, kFloat64, 0.5, 2.0);
  expect_gradcheck([&](auto& in) { return batch_norm(in[0], in[1], in[2], rm, rv, false); }, {x, w, b},
                   "batch_norm eval");
}

TEST_CASE("batch_norm keeps fp32 statistics for f16 input", "[batchnorm][f16]") {
  manual_seed(12);
  const Tensor x16 = randn({4, 3, 5, 5}, kFloat32, 100.0, 0.5).to(kFloat16);  // large mean, small spread
  const Tensor running_mean = zeros({3}), running_var = ones({3});
  const Tensor y16 = batch_norm(x16, Tensor(), Tensor(), running_mean, running_var, true);
  CHECK(y16.dtype() == kFloat16);
  CHECK(running_mean.dtype() == kFloat32);
  Tensor mean32, invstd32;
  kernels::batch_norm_stats(x16, Tensor(), Tensor(), 0.1, kEps, &mean32, &invstd32);
  CHECK(mean32.dtype() == kFloat32);
  CHECK(invstd32.dtype() == kFloat32);
  // the same f16 values normalised in f64: statistics must not lose the small spread under the mean
  const Tensor x64 = x16.to(kFloat64);
  const Tensor rm64 = zeros({3}, kFloat64), rv64 = ones({3}, kFloat64);
  const Tensor y64 = batch_norm(x64, Tensor(), Tensor(), rm64, rv64, true);
  test::expect_close(y16, y64, 4e-3, "batch_norm f16 vs f64");  // one f16 rounding of O(1) outputs
  test::expect_close(running_mean, rm64, 1e-6, "running_mean f16 input");
  test::expect_close(running_var, rv64, 1e-5, "running_var f16 input");
}

TEST_CASE("batch_norm does not update running statistics while recomputing", "[batchnorm]") {
  const Tensor running_mean = zeros({2}), running_var = ones({2});
  {
    autograd::RecomputeScope recompute;
    CHECK(autograd::is_recomputing());
    batch_norm(first_batch(), Tensor(), Tensor(), running_mean, running_var, true);
  }
  CHECK_FALSE(autograd::is_recomputing());
  expect_values(running_mean, {0, 0}, 0, "running_mean untouched by a recompute");
  expect_values(running_var, {1, 1}, 0, "running_var untouched by a recompute");
}

TEST_CASE("batch_norm errors name the op and the shapes", "[batchnorm][errors]") {
  expect_error_contains([] { batch_norm(zeros({1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true); },
                        {"batch_norm", "more than 1 value per channel", "[1, 3]"});
  expect_error_contains([] { batch_norm(zeros({4, 3, 2, 2}), ones({2}), Tensor(), Tensor(), Tensor(), true); },
                        {"batch_norm", "weight", "[3]", "[2]", "[4, 3, 2, 2]"});
  expect_error_contains([] { batch_norm(zeros({4, 3}), Tensor(), Tensor(), Tensor(), Tensor(), false); },
                        {"batch_norm", "running_mean", "[4, 3]"});
  expect_error_contains([] { batch_norm(zeros({4}), Tensor(), Tensor(), Tensor(), Tensor(), true); },
                        {"batch_norm", "[N, C, ...]", "[4]"});
}
