// batch_norm: training normalisation and running statistics against values
// computed by hand (momentum 0.1, unbiased running variance), eval with the
// running statistics, gradcheck in both modes, f16 with fp32 statistics, the
// recompute guard, errors.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/recompute_state.h"
#include "kernels/batch_norm_math.h"
#include "kernels/ops.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;
using namespace ember::test;

namespace {

constexpr double kEps = 1e-5;

// x [2, 2, 2, 1]: channel 0 holds {1, 2, 3, 4}, channel 1 holds {2, 4, 6, 8}
// (n-major: x[0,0] = {1, 2}, x[0,1] = {2, 4}, x[1,0] = {3, 4}, x[1,1] = {6, 8}).
Tensor first_batch() { return from_vector<float>({1, 2, 2, 4, 3, 4, 6, 8}, {2, 2, 2, 1}); }
// channel 0 holds {0, 0, 2, 6}, channel 1 holds {-1, 1, -1, 1}
Tensor second_batch() { return from_vector<float>({0, 0, -1, 1, 2, 6, -1, 1}, {2, 2, 2, 1}); }

// One channel's statistics and affine parameters.
struct Channel {
  double mean, var, w, b;
};

// first_batch() normalised by each channel's (mean, var, w, b) in fp64, and the bound of
// `roundings` f32 roundings, each of a term of y = x * scale + shift: (|x| + |mean|) |w| invstd + |b|.
struct Normalised {
  std::vector<double> y, bound;
};
Normalised normalise_first_batch(const Channel (&channels)[2], int64_t roundings) {
  Normalised out;
  const std::vector<double> x = first_batch().to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    const Channel& c = channels[(i / 2) % 2];  // [2, 2, 2, 1]: two values per (n, c)
    const double invstd = 1 / std::sqrt(c.var + kEps);
    out.y.push_back((x[i] - c.mean) * invstd * c.w + c.b);
    const double magnitude = (std::fabs(x[i]) + std::fabs(c.mean)) * std::fabs(c.w) * invstd + std::fabs(c.b);
    out.bound.push_back(test::ErrorModel{0, roundings, 0}.bound(kFloat32, magnitude));
  }
  return out;
}

// How far training-mode batch_norm(x) without affine, its statistics in fp32 (the kernel's, for
// f16 and f32 x), may be from fp64 on the same values, per element, to first order; and the
// statistics' own errors. Per channel of M values with mean mu, biased variance var and
// R = max |x - mu|, the kernel sums d = x - K for K one of the values (|d| <= 2R, mean d^2 <= var + R^2):
//   mean      gamma(M + 1) mean |d| (d's rounding and the sum of M), rounded to f32: u |mu|
//   variance  mean d^2 - c^2 with c = mean d (|c| <= R): gamma(M + 1) (mean d^2 + 2 |c| mean |d|)
//   invstd    half the variance's error relative to var + eps, rounded to f32: u
//   y         x * invstd - mean * invstd: scale and shift rounded to f32, the product and the sum
//             (4 u of (|x| + |mu|) invstd); mean's error times invstd; |xhat| times invstd's
//             relative error; the output's rounding to x's dtype.
struct StatsBound {
  std::vector<double> mean_error, var_error;  // [C]
  Tensor y;                                   // like x
};
StatsBound batch_norm_stats_bound(const Tensor& x64, DType dtype) {
  const std::vector<double> x = x64.to_vector<double>();
  const int64_t batch = x64.size(0), channels = x64.size(1), inner = x64.numel() / (batch * channels);
  const int64_t count = batch * inner;
  const double u = test::unit_roundoff(kFloat32), g = test::gamma(count + 1, kFloat32);
  StatsBound out{std::vector<double>(static_cast<size_t>(channels)), std::vector<double>(static_cast<size_t>(channels)),
                 Tensor()};
  std::vector<double> y_bound(x.size());
  for (int64_t c = 0; c < channels; ++c) {
    std::vector<size_t> at;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t i = 0; i < inner; ++i) at.push_back(static_cast<size_t>((n * channels + c) * inner + i));
    double mu = 0, var = 0, spread = 0;
    for (size_t i : at) mu += x[i] / static_cast<double>(count);
    for (size_t i : at) var += (x[i] - mu) * (x[i] - mu) / static_cast<double>(count);
    for (size_t i : at) spread = std::max(spread, std::fabs(x[i] - mu));
    const double mean_error = g * 2 * spread + u * std::fabs(mu);
    const double var_error = g * (var + spread * spread + 2 * spread * 2 * spread);
    const double invstd = 1 / std::sqrt(var + kEps), invstd_error = var_error / (2 * (var + kEps)) + u;
    for (size_t i : at) {
      const double xhat = (x[i] - mu) * invstd;
      const double apply_error = 4 * u * invstd * (std::fabs(x[i]) + std::fabs(mu));
      y_bound[i] = std::fabs(xhat) * invstd_error + invstd * mean_error + apply_error +
                   test::unit_roundoff(dtype) * std::fabs(xhat) + test::underflow_error(dtype);
    }
    out.mean_error[static_cast<size_t>(c)] = mean_error;
    out.var_error[static_cast<size_t>(c)] = var_error;
  }
  out.y = from_vector<double>(y_bound, x64.shape(), TensorOptions(kFloat64));
  return out;
}

}  // namespace

TEST_CASE("batch_norm training normalises with the batch mean and biased variance", "[batchnorm]") {
  const Tensor w = from_vector<float>({2.0f, 0.5f}, {2});
  const Tensor b = from_vector<float>({1.0f, -1.0f}, {2});
  const Tensor y = batch_norm(first_batch(), w, b, Tensor(), Tensor(), /*training=*/true);
  // channel 0: mean 2.5, biased var 1.25; channel 1: mean 5, biased var 5. These statistics are
  // exact (the shifted sums are small integers); invstd rounds to f32 once, then the apply's
  // scale, shift, product and sum: 5 roundings (the double arithmetic is far inside gamma's slack).
  const Normalised want = normalise_first_batch({{2.5, 1.25, 2, 1}, {5, 5, 0.5, -1}}, 5);
  test::expect_within(y, want.y, want.bound, "batch_norm train");
  // without affine parameters: plain standardisation
  const Tensor z = batch_norm(first_batch(), Tensor(), Tensor(), Tensor(), Tensor(), true);
  test::expect_within(mean(z.reshape({2, 2, 2}).transpose(0, 1).reshape({2, 4}), 1), zeros({2}, kFloat64),
                      test::batch_norm_mean_bound(first_batch()), "batch_norm mean 0");
}

TEST_CASE("batch_norm running statistics follow momentum 0.1 with the unbiased variance", "[batchnorm]") {
  const Tensor running_mean = zeros({2}), running_var = ones({2});
  batch_norm(first_batch(), Tensor(), Tensor(), running_mean, running_var, true, 0.1);
  // The batch statistics are exact here; each step's update runs in double and rounds to the f32
  // buffer once, the first rounding carried into the second step at weight 0.9 (below the second
  // result here): 2 roundings, the double arithmetic far inside the tolerance's slack.
  const double tol = 2 * test::unit_roundoff(kFloat32);
  // step 1: mean (2.5, 5); unbiased var (5/3, 20/3)
  const double rm0 = 0.1 * 2.5, rm1 = 0.1 * 5, rv0 = 0.9 + 0.1 * 5.0 / 3, rv1 = 0.9 + 0.1 * 20.0 / 3;
  expect_values(running_mean, {rm0, rm1}, tol, "running_mean after 1 step");
  expect_values(running_var, {rv0, rv1}, tol, "running_var after 1 step");
  batch_norm(second_batch(), Tensor(), Tensor(), running_mean, running_var, true, 0.1);
  // step 2: channel 0 {0, 0, 2, 6}: mean 2, unbiased var (4+4+0+16)/3 = 8;
  //         channel 1 {-1, 1, -1, 1}: mean 0, unbiased var 4/3
  expect_values(running_mean, {0.9 * rm0 + 0.1 * 2, 0.9 * rm1}, tol, "running_mean after 2 steps");
  expect_values(running_var, {0.9 * rv0 + 0.1 * 8, 0.9 * rv1 + 0.1 * 4.0 / 3}, tol, "running_var after 2 steps");
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
  // invstd = 1 / sqrt(running_var + eps) in f32: eps's rounding (of a term below var + eps), the
  // add, sqrt and the division; then the apply's scale, shift, product and sum: 8 roundings.
  const Normalised want = normalise_first_batch({{1, 4, 2, 1}, {-2, 0.25, 0.5, -1}}, 8);
  test::expect_within(y, want.y, want.bound, "batch_norm eval");
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

namespace {

// batch_norm_relu against relu(batch_norm(...)), and batch_norm_add_relu against
// relu(add(batch_norm(...), residual)), on `device`: y, dx, the residual's gradient, dweight and
// dbias equal bit for bit (the fused kernels round each value as the separate ops do, and mask
// where that value was positive), in training and eval, f32, f64 and f16, with and without the
// affine parameters.
void expect_fused_relu_is_exact(Device device) {
  manual_seed(13);
  for (bool add_residual : {false, true})
    for (DType dtype : {kFloat32, kFloat64, kFloat16})
      for (bool training : {true, false})
        for (bool affine : {true, false}) {
          INFO((add_residual ? "batch_norm_add_relu " : "batch_norm_relu ") << dtype_name(dtype)
               << (training ? " training" : " eval") << (affine ? "" : " without affine"));
          const auto draw = [&](const Shape& shape) { return randn(shape, kFloat32).to(dtype).to(device); };
          const Tensor x0 = draw({4, 3, 5, 7}), r0 = draw({4, 3, 5, 7}), dy = draw({4, 3, 5, 7});
          const Tensor w0 = rand({3}, kFloat32, 0.5, 1.5).to(dtype).to(device), b0 = draw({3});
          const Tensor rm0 = randn({3}, kFloat32).to(device), rv0 = rand({3}, kFloat32, 0.5, 2.0).to(device);
          std::vector<Tensor> outs[2];
          for (int fused = 0; fused < 2; ++fused) {
            const Tensor x = x0.clone().requires_grad_(), r = r0.clone().requires_grad_();
            const Tensor w = affine ? w0.clone().requires_grad_() : Tensor();
            const Tensor b = affine ? b0.clone().requires_grad_() : Tensor();
            const Tensor rm = rm0.clone(), rv = rv0.clone();
            Tensor y;
            if (add_residual)
              y = fused ? batch_norm_add_relu(x, r, w, b, rm, rv, training)
                        : relu(add(batch_norm(x, w, b, rm, rv, training), r));
            else
              y = fused ? batch_norm_relu(x, w, b, rm, rv, training) : relu(batch_norm(x, w, b, rm, rv, training));
            y.backward(dy);
            outs[fused] = {y, x.grad(), rm, rv};
            if (add_residual) outs[fused].push_back(r.grad());
            if (affine) outs[fused].insert(outs[fused].end(), {w.grad(), b.grad()});
          }
          for (size_t i = 0; i < outs[0].size(); ++i) {
            INFO("output " << i << " (y, dx, running_mean, running_var, [dresidual], [dweight, dbias])");
            CHECK(outs[0][i].to(kCPU).to_vector<double>() == outs[1][i].to(kCPU).to_vector<double>());
          }
          // the mask matters: some outputs are zero, some are not
          const std::vector<double> y = outs[1][0].to(kCPU).to_vector<double>();
          CHECK(std::count(y.begin(), y.end(), 0.0) > 0);
          CHECK(std::count_if(y.begin(), y.end(), [](double v) { return v > 0; }) > 0);
        }
}

}  // namespace

TEST_CASE("batch_norm_relu and batch_norm_add_relu equal the separate ops bit for bit, forward and backward",
          "[batchnorm]") {
  expect_fused_relu_is_exact(kCPU);
}

EMBER_CUDA_TEST_CASE("batch_norm_relu and batch_norm_add_relu equal the separate ops bit for bit on cuda",
                     "[batchnorm]") {
  expect_fused_relu_is_exact(kCUDA);
}

// The kernel takes the residual and the ReLU independently (the backend contract): each of the
// four combinations equals the separate kernels bit for bit.
TEST_CASE("batch_norm_apply adds a residual and clamps independently, as the separate kernels do", "[batchnorm]") {
  manual_seed(16);
  const Tensor x = randn({4, 3, 5, 7}), r = randn({4, 3, 5, 7});
  Tensor mean, invstd;
  kernels::batch_norm_stats(x, Tensor(), Tensor(), 0.1, kEps, &mean, &invstd);
  const Tensor w = rand({3}, kFloat32, 0.5, 1.5), b = randn({3});
  const Tensor plain = kernels::batch_norm_apply(x, mean, invstd, w, b);
  for (bool relu : {false, true})
    for (bool residual : {false, true}) {
      INFO("relu " << relu << ", residual " << residual);
      Tensor want = residual ? kernels::binary(kernels::BinaryOp::add, plain, r) : plain;
      if (relu) want = kernels::unary(kernels::UnaryOp::relu, want, 0.0);
      const Tensor got = kernels::batch_norm_apply(x, mean, invstd, w, b, relu, residual ? r : Tensor());
      CHECK(got.to_vector<float>() == want.to_vector<float>());
    }
}

TEST_CASE("batch_norm_relu and batch_norm_add_relu pass gradcheck", "[batchnorm][gradcheck]") {
  manual_seed(14);
  const Tensor x = randn({3, 2, 3, 2}, kFloat64, 0.5, 2.0);
  const Tensor w = rand({2}, kFloat64, 0.5, 1.5), b = randn({2}, kFloat64);
  expect_gradcheck([](auto& in) { return batch_norm_relu(in[0], in[1], in[2], Tensor(), Tensor(), true); }, {x, w, b},
                   "batch_norm_relu train");
  const Tensor rm = randn({2}, kFloat64), rv = rand({2}, kFloat64, 0.5, 2.0);
  expect_gradcheck([&](auto& in) { return batch_norm_relu(in[0], in[1], in[2], rm, rv, false); }, {x, w, b},
                   "batch_norm_relu eval");
  const Tensor r = randn({3, 2, 3, 2}, kFloat64);
  expect_gradcheck([](auto& in) { return batch_norm_add_relu(in[0], in[1], in[2], in[3], Tensor(), Tensor(), true); },
                   {x, r, w, b}, "batch_norm_add_relu train");
  expect_gradcheck([&](auto& in) { return batch_norm_add_relu(in[0], in[1], in[2], in[3], rm, rv, false); },
                   {x, r, w, b}, "batch_norm_add_relu eval");
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
  const StatsBound bound = batch_norm_stats_bound(x64, kFloat16);
  test::expect_within(y16, y64, bound.y, "batch_norm f16 vs f64");
  // running = 0.9 running + 0.1 stat (the variance unbiased by M / (M - 1)), in double, rounded to
  // f32: 0.1 of the statistic's error and one rounding of the result
  const double m = 4 * 5 * 5, u = test::unit_roundoff(kFloat32);
  std::vector<double> mean_bound, var_bound;
  for (size_t c = 0; c < 3; ++c) {
    mean_bound.push_back(0.1 * bound.mean_error[c] + u * std::fabs(rm64.to_vector<double>()[c]));
    var_bound.push_back(0.1 * m / (m - 1) * bound.var_error[c] + u * std::fabs(rv64.to_vector<double>()[c]));
  }
  test::expect_within(running_mean, rm64.to_vector<double>(), mean_bound, "running_mean f16 input");
  test::expect_within(running_var, rv64.to_vector<double>(), var_bound, "running_var f16 input");
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
