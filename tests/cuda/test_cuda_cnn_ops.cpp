// Differential tests: the CUDA CNN ops (kernels/cuda/conv2d.cu with both conv
// providers, pool2d.cu, batch_norm.cu, dropout.cu) against the CPU reference,
// forward and backward, f32, f16 and f64 (gradcheck on the GPU), plus the cuDNN
// workspace in the memory report. Skipped at run time without a GPU; always compiled.
//
// Tolerances (|gpu - cpu| <= tol * (1 + |cpu|)):
//   kTolF32 = 1e-4: our conv sums up to ~600 products in another order (and with
//     FMA); relative moves ~1e-6, so 1e-4 has margin. Pooling, batch norm and
//     dropout do the same float operations (only the reduction order differs).
//   kTolCudnnF32 = 1e-3: cuDNN may pick FFT or Winograd algorithms, whose transforms
//     round differently from a direct sum (~1e-5 of the operands' scale).
//   kTolF16 = 5e-3: outputs are rounded to f16 (half an ulp is 2^-11 ~ 4.9e-4
//     relative) after fp32 sums in another order, and our f16 conv adds the bias after
//     a first rounding: a few half-ulps at most.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "kernels/ops.h"
#include "kernels/providers.h"
#include "memory/memory.h"
#include "tests/support/op_contract.h"
#ifdef EMBER_HAVE_CUDA
#include "kernels/cuda/cudnn_conv.cuh"
#endif

using namespace ember;
using test::expect_close;
using test::expect_gradcheck;
using test::expect_matches_cpu;

namespace {

constexpr double kTolF32 = 1e-4;
constexpr double kTolCudnnF32 = 1e-3;
constexpr double kTolF16 = 5e-3;

// Selects a conv provider for one scope and restores the previous one.
class ConvProviderGuard {
 public:
  explicit ConvProviderGuard(kernels::ConvProvider provider) : previous_(kernels::conv_provider()) {
    kernels::set_conv_provider(provider);
  }
  ~ConvProviderGuard() { kernels::set_conv_provider(previous_); }
  ConvProviderGuard(const ConvProviderGuard&) = delete;
  ConvProviderGuard& operator=(const ConvProviderGuard&) = delete;

 private:
  kernels::ConvProvider previous_;
};

const std::vector<kernels::ConvProvider> kProviders = {kernels::ConvProvider::custom, kernels::ConvProvider::cudnn};

double f32_tol(kernels::ConvProvider p) { return p == kernels::ConvProvider::cudnn ? kTolCudnnF32 : kTolF32; }

using MultiFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Like expect_matches_cpu for ops with several outputs: each must match in shape, dtype and values.
void expect_all_match_cpu(const MultiFn& fn, const std::vector<Tensor>& cpu_inputs, double tol, const std::string& op) {
  std::vector<Tensor> cuda_inputs;
  for (const Tensor& t : cpu_inputs) cuda_inputs.push_back(t.defined() ? t.to(kCUDA) : t);
  const std::vector<Tensor> expected = fn(cpu_inputs), actual = fn(cuda_inputs);
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const std::string name = op + " output " + std::to_string(i);
    INFO(name);
    REQUIRE(actual[i].is_cuda());
    CHECK(actual[i].dtype() == expected[i].dtype());
    expect_close(actual[i].to(kCPU), expected[i], tol, name + " (cuda vs cpu)");
  }
}

struct ConvCase {
  int64_t n, c, h, w, oc, kh, kw;
  Size2 stride, padding, dilation;
};

// Strides 1/2, padding 0-2, dilation 1/2, odd and non-square sizes, batch 1-3, a 1x1
// kernel with and without the pointwise shortcut, and more channels than one GEMM tile.
const std::vector<ConvCase> kCases = {
    {1, 1, 5, 5, 1, 3, 3, 1, 0, 1},         {3, 2, 7, 5, 4, 3, 3, 1, 1, 1},
    {3, 3, 7, 5, 2, 3, 2, 2, 1, 1},         {2, 2, 9, 8, 3, 3, 3, 1, 2, 2},
    {3, 4, 6, 6, 5, 1, 1, 1, 0, 1},         {2, 3, 6, 7, 2, 1, 1, 2, 0, 1},
    {1, 2, 8, 8, 3, 5, 5, 1, 2, 1},         {3, 2, 7, 9, 3, 3, 3, {2, 1}, {0, 2}, {1, 2}},
    {2, 16, 12, 12, 70, 3, 3, 1, 1, 1},
};

kernels::Conv2dArgs conv_args(const ConvCase& k) {
  kernels::Conv2dArgs a;
  a.stride = k.stride;
  a.padding = k.padding;
  a.dilation = k.dilation;
  return a;
}

std::string conv_name(const ConvCase& k, kernels::ConvProvider p, DType dtype) {
  return std::string("conv2d ") + kernels::conv_provider_name(p) + " " + dtype_name(dtype) + " x [" +
         std::to_string(k.n) + ", " + std::to_string(k.c) + ", " + std::to_string(k.h) + ", " + std::to_string(k.w) +
         "] k " + std::to_string(k.kh) + "x" + std::to_string(k.kw);
}

// Forward (with bias), input, weight and bias gradients of one case, CUDA vs CPU.
void expect_conv_matches(const ConvCase& k, DType dtype, double tol, const std::string& name) {
  const kernels::Conv2dArgs args = conv_args(k);
  const Shape x_shape{k.n, k.c, k.h, k.w}, w_shape{k.oc, k.c, k.kh, k.kw};
  const kernels::Conv2dGeometry g = kernels::conv2d_geometry(x_shape, w_shape, args, "test");
  const Tensor x = randn(x_shape).to(dtype), w = randn(w_shape).to(dtype), b = randn({k.oc}).to(dtype);
  const Tensor dy = randn({k.n, k.oc, g.out_h, g.out_w}).to(dtype);
  expect_all_match_cpu(
      [&](auto& in) {
        return std::vector<Tensor>{kernels::conv2d(in[0], in[1], in[2], args),
                                   kernels::conv2d_backward_input(in[3], in[1], x_shape, args),
                                   kernels::conv2d_backward_weight(in[0], in[3], w_shape, args),
                                   kernels::conv2d_backward_bias(in[3])};
      },
      {x, w, b, dy}, tol, name + " (y, dx, dw, db)");
}

}  // namespace

EMBER_CUDA_TEST_CASE("conv2d forward and gradients match cpu for each provider", "[conv2d][cudnn]") {
  for (kernels::ConvProvider p : kProviders) {
    ConvProviderGuard guard(p);
    for (const ConvCase& k : kCases) expect_conv_matches(k, kFloat32, f32_tol(p), conv_name(k, p, kFloat32));
  }
}

EMBER_CUDA_TEST_CASE("conv2d f16 matches cpu for each provider", "[conv2d][cudnn][f16]") {
  for (kernels::ConvProvider p : kProviders) {
    ConvProviderGuard guard(p);
    for (const ConvCase& k : kCases) expect_conv_matches(k, kFloat16, kTolF16, conv_name(k, p, kFloat16));
  }
}

EMBER_CUDA_TEST_CASE("conv2d over more images than one column chunk matches cpu", "[conv2d][cudnn]") {
  // 64 channels x 3x3 taps x 64x64 pixels is 9.4 MB of f32 columns per image: 8 images
  // exceed the 64 MiB chunk budget, so the custom provider runs two chunks and
  // accumulates the weight gradient across them.
  const ConvCase k{8, 64, 64, 64, 16, 3, 3, 1, 1, 1};
  for (kernels::ConvProvider p : kProviders) {
    ConvProviderGuard guard(p);
    expect_conv_matches(k, kFloat32, f32_tol(p), conv_name(k, p, kFloat32) + " chunked");
  }
}

EMBER_CUDA_TEST_CASE("conv2d with empty batches or channels matches cpu", "[conv2d][cudnn]") {
  for (kernels::ConvProvider p : kProviders) {
    ConvProviderGuard guard(p);
    const std::string name = std::string("conv2d ") + kernels::conv_provider_name(p);
    expect_conv_matches({0, 2, 5, 5, 3, 3, 3, 1, 1, 1}, kFloat32, 0, name + " empty batch");
    expect_conv_matches({2, 2, 5, 5, 0, 3, 3, 1, 1, 1}, kFloat32, 0, name + " no output channels");
    // No input channels: an empty sum, so y is the bias alone and dW is empty.
    expect_conv_matches({2, 0, 5, 5, 3, 3, 3, 1, 1, 1}, kFloat32, 0, name + " no input channels");
  }
}

EMBER_CUDA_TEST_CASE("conv2d gradients on the GPU pass gradcheck for each provider", "[conv2d][cudnn][gradcheck]") {
  for (kernels::ConvProvider p : kProviders) {
    ConvProviderGuard guard(p);
    const std::string name = std::string("conv2d on cuda ") + kernels::conv_provider_name(p);
    const auto to_gpu = [](const Shape& s) { return randn(s, kFloat64).to(kCUDA); };
    expect_gradcheck([](auto& in) { return conv2d(in[0], in[1], in[2], 2, 1); },
                     {to_gpu({2, 2, 5, 6}), to_gpu({3, 2, 3, 3}), to_gpu({3})}, name + " stride 2 pad 1");
    expect_gradcheck([](auto& in) { return conv2d(in[0], in[1], Tensor(), 1, 2, 2); },
                     {to_gpu({1, 2, 6, 6}), to_gpu({2, 2, 3, 3})}, name + " dilation 2");
    expect_gradcheck([](auto& in) { return conv2d(in[0], in[1]); }, {to_gpu({2, 3, 4, 4}), to_gpu({2, 3, 1, 1})},
                     name + " pointwise");
  }
}

#ifdef EMBER_HAVE_CUDA
EMBER_CUDA_TEST_CASE("cudnn's workspace is counted as workspace memory", "[conv2d][cudnn][memory]") {
  ConvProviderGuard guard(kernels::ConvProvider::cudnn);
  const kernels::Conv2dArgs args;  // stride 1, no padding
  const Shape x_shape{16, 32, 40, 40}, w_shape{64, 32, 5, 5};
  const kernels::Conv2dGeometry g = kernels::conv2d_geometry(x_shape, w_shape, args, "test");
  const Tensor x = randn(x_shape).to(kCUDA), w = randn(w_shape).to(kCUDA);
  const Tensor dy = randn({g.batch, g.out_channels, g.out_h, g.out_w}).to(kCUDA);
  const auto workspace_stat = [] {
    return memory_stats(kCUDA).by_category[static_cast<size_t>(MemoryCategory::workspace)];
  };
  using kernels::cuda::ConvDirection;
  const std::vector<std::pair<ConvDirection, std::function<Tensor()>>> calls = {
      {ConvDirection::forward, [&] { return kernels::conv2d(x, w, Tensor(), args); }},
      {ConvDirection::backward_data, [&] { return kernels::conv2d_backward_input(dy, w, x_shape, args); }},
      {ConvDirection::backward_filter, [&] { return kernels::conv2d_backward_weight(x, dy, w_shape, args); }},
  };
  size_t most = 0;
  for (const auto& [direction, call] : calls) {
    const kernels::cuda::CudnnConvPlan plan = kernels::cuda::cudnn_conv2d_plan(direction, kFloat32, g, kCUDA);
    INFO("direction " << static_cast<int>(direction) << ": algorithm " << plan.algorithm << ", workspace "
                      << plan.workspace_bytes << " bytes");
    reset_peak_stats(kCUDA);
    const int64_t before = workspace_stat().current;
    const Tensor out = call();
    cuda::synchronize();
    CHECK(workspace_stat().peak - before >= static_cast<int64_t>(plan.workspace_bytes));
    CHECK(workspace_stat().current == before);  // released when the call returned
    most = std::max(most, plan.workspace_bytes);
  }
  // A 5x5 kernel over 32 channels: cuDNN's favourites (implicit precomputed GEMM, FFT,
  // Winograd) need scratch in at least one direction, so the checks above saw real bytes.
  CHECK(most > 0);
}
#endif

namespace {

// randn rounded down to halves' integers: a few distinct values, so pooling windows hold ties.
Tensor coarse_randn(const Shape& shape) {
  std::vector<double> v = randn(shape, kFloat64).to_vector<double>();
  for (double& e : v) e = std::floor(2 * e);
  return from_vector<double>(v, shape).to(kFloat32);
}

}  // namespace

EMBER_CUDA_TEST_CASE("max_pool2d values and gradients match cpu", "[pool]") {
  struct PoolCase { Shape x; Size2 kernel, stride, padding; };
  const std::vector<PoolCase> cases = {
      {{2, 3, 8, 8}, 2, 2, 0},  {{2, 3, 9, 7}, 3, 2, 1},  {{1, 2, 6, 5}, 3, 1, 1},  // 3x3/1: overlapping windows
      {{2, 2, 7, 9}, {2, 3}, {1, 2}, {1, 1}}, {{1, 1, 1, 1}, 1, 1, 0}, {{0, 3, 4, 4}, 2, 2, 0},
  };
  for (const PoolCase& c : cases) {
    kernels::Pool2dArgs args;
    args.kernel = c.kernel;
    args.stride = c.stride;
    args.padding = c.padding;
    const Tensor probe = kernels::max_pool2d(zeros(c.x), args);
    for (DType dtype : {kFloat32, kFloat16, kFloat64}) {
      // Both backends find the same argmax (kernels/pool_math.h) and add overlapping windows'
      // gradients in the same order with the same rounding: the results are equal, f16 included.
      expect_all_match_cpu(
          [&](auto& in) {
            return std::vector<Tensor>{kernels::max_pool2d(in[0], args), kernels::max_pool2d_backward(in[1], in[0], args)};
          },
          {randn(c.x).to(dtype), randn(probe.shape()).to(dtype)}, 0, std::string("max_pool2d ") + dtype_name(dtype));
      // ties: values on a coarse grid, so most windows hold several maxima; the first must win on both
      expect_all_match_cpu(
          [&](auto& in) {
            return std::vector<Tensor>{kernels::max_pool2d(in[0], args), kernels::max_pool2d_backward(in[1], in[0], args)};
          },
          {coarse_randn(c.x).to(dtype), randn(probe.shape()).to(dtype)}, 0,
          std::string("max_pool2d ties ") + dtype_name(dtype));
    }
  }
}

EMBER_CUDA_TEST_CASE("max_pool2d routes the gradient to the first NaN like the cpu", "[pool]") {
  std::vector<float> values(16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  values[5] = NAN;
  kernels::Pool2dArgs args;
  args.kernel = 2;
  args.stride = 2;
  values[6] = NAN;  // a second NaN in the same window: the first (5) takes the gradient
  expect_matches_cpu([&](auto& in) { return kernels::max_pool2d_backward(in[1], in[0], args); },
                     {from_vector<float>(values, {1, 1, 4, 4}), from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2})}, 0,
                     "max_pool2d NaN gradient");
}

EMBER_CUDA_TEST_CASE("avg_pool2d and its gradient match cpu", "[pool]") {
  struct PoolCase { Shape x; Size2 kernel, stride, padding; };
  const std::vector<PoolCase> cases = {
      {{2, 3, 8, 8}, 2, 2, 0}, {{2, 3, 9, 7}, 3, 2, 1}, {{1, 2, 6, 5}, 3, 1, 1}, {{2, 2, 7, 9}, {2, 3}, {1, 2}, {1, 1}},
  };
  for (const PoolCase& c : cases) {
    kernels::Pool2dArgs args;
    args.kernel = c.kernel;
    args.stride = c.stride;
    args.padding = c.padding;
    const Tensor probe = kernels::avg_pool2d(zeros(c.x), args);
    for (DType dtype : {kFloat32, kFloat16, kFloat64}) {
      expect_all_match_cpu(
          [&](auto& in) {
            return std::vector<Tensor>{kernels::avg_pool2d(in[0], args),
                                       kernels::avg_pool2d_backward(in[1], c.x, args)};
          },
          {randn(c.x).to(dtype), randn(probe.shape()).to(dtype)}, dtype == kFloat16 ? kTolF16 : kTolF32,
          std::string("avg_pool2d ") + dtype_name(dtype));
    }
  }
}

EMBER_CUDA_TEST_CASE("pooling gradients on the GPU pass gradcheck", "[pool][gradcheck]") {
  const Tensor x = randn({2, 2, 5, 6}, kFloat64).to(kCUDA);
  expect_gradcheck([](auto& in) { return max_pool2d(in[0], 3, 2, 1); }, {x}, "max_pool2d on cuda");
  expect_gradcheck([](auto& in) { return avg_pool2d(in[0], 3, 1, 1); }, {x}, "avg_pool2d on cuda");
}

EMBER_CUDA_TEST_CASE("batch_norm statistics and running statistics match cpu", "[batchnorm]") {
  // Running stats are updated in place: each backend gets its own copy. A channel with a
  // large mean next to its spread checks the shifted sums.
  for (DType dtype : {kFloat32, kFloat16, kFloat64}) {
    for (const Shape& shape : {Shape{4, 3, 5, 7}, Shape{5, 6}, Shape{2, 2, 1, 1}, Shape{64, 16, 9, 9}}) {
      const Tensor x = (randn(shape) * 3.0 + 100.0).to(dtype);
      expect_all_match_cpu(
          [&](auto& in) {
            const Tensor running_mean = in[1].clone(), running_var = in[2].clone();
            Tensor mean, invstd;
            kernels::batch_norm_stats(in[0], running_mean, running_var, 0.1, 1e-5, &mean, &invstd);
            return std::vector<Tensor>{mean, invstd, running_mean, running_var};
          },
          {x, randn({shape[1]}), rand({shape[1]}, {}, 0.5, 2.0)}, dtype == kFloat16 ? kTolF16 : kTolF32,
          std::string("batch_norm_stats ") + dtype_name(dtype));
    }
  }
}

EMBER_CUDA_TEST_CASE("batch_norm apply and backward match cpu", "[batchnorm]") {
  const Shape shape{4, 3, 5, 7};
  for (DType dtype : {kFloat32, kFloat16, kFloat64}) {
    const double tol = dtype == kFloat16 ? kTolF16 : kTolF32;
    const DType stats = dtype == kFloat64 ? kFloat64 : kFloat32;
    const Tensor x = randn(shape).to(dtype), dy = randn(shape).to(dtype);
    const Tensor mean = randn({3}).to(stats), invstd = rand({3}, TensorOptions(stats), 0.5, 2.0);
    const Tensor weight = randn({3}), bias = randn({3});  // f32 parameters next to f16 x: mixed precision
    for (bool affine : {true, false}) {
      const Tensor w = affine ? weight : Tensor(), b = affine ? bias : Tensor();
      const std::string name = std::string("batch_norm ") + dtype_name(dtype) + (affine ? " affine" : "");
      expect_all_match_cpu(
          [&](auto& in) { return std::vector<Tensor>{kernels::batch_norm_apply(in[0], in[1], in[2], in[3], in[4])}; },
          {x, mean, invstd, w, b}, tol, name + " apply");
      for (bool batch_stats : {true, false}) {
        expect_all_match_cpu(
            [&](auto& in) {
              Tensor dx, dweight, dbias;
              kernels::batch_norm_backward(in[0], in[1], in[2], in[3], in[4], batch_stats, &dx, &dweight, &dbias);
              return std::vector<Tensor>{dx, dweight, dbias};
            },
            {x, dy, mean, invstd, w}, tol, name + (batch_stats ? " backward (batch stats)" : " backward (eval)"));
      }
    }
  }
}

EMBER_CUDA_TEST_CASE("batch_norm gradients on the GPU pass gradcheck", "[batchnorm][gradcheck]") {
  const auto gpu = [](const Shape& s) { return randn(s, kFloat64).to(kCUDA); };
  for (bool training : {true, false}) {
    const Tensor running_mean = zeros({3}, kFloat64).to(kCUDA), running_var = ones({3}, kFloat64).to(kCUDA);
    expect_gradcheck(
        [&](auto& in) { return batch_norm(in[0], in[1], in[2], running_mean, running_var, training); },
        {gpu({4, 3, 2, 3}), gpu({3}), gpu({3})}, training ? "batch_norm train on cuda" : "batch_norm eval on cuda");
  }
}

EMBER_CUDA_TEST_CASE("dropout draws the cpu's mask from the same generator state", "[dropout]") {
  // The mask is the same Philox predicate on both sides and the scaling the same float
  // multiply: outputs are equal, bit for bit in f32 and f64; f16 allows one rounding
  // difference of the fp32 product (half an ulp, 2^-11 relative), so 1e-3.
  const GeneratorState state{20240611, 12};
  for (DType dtype : {kFloat32, kFloat16, kFloat64}) {
    for (int64_t n : {1, 7, 1001, 100003, 0}) {
      for (double p : {0.0, 0.3, 0.5, 1.0}) {
        expect_matches_cpu([&](auto& in) { return kernels::dropout(in[0], p, state); },
                           {rand({n}, TensorOptions(dtype), 1.0, 2.0)}, dtype == kFloat16 ? 1e-3 : 0.0,
                           std::string("dropout ") + dtype_name(dtype) + " p " + std::to_string(p));
      }
    }
  }
  // Backward is the same call on dy with the same state: the zeros land where the forward's did.
  const Tensor x = rand({4, 5, 6}, TensorOptions(kCUDA), 1.0, 2.0), dy = ones({4, 5, 6}).to(kCUDA);
  const std::vector<double> y = kernels::dropout(x, 0.5, state).to_vector<double>();
  const std::vector<double> dx = kernels::dropout(dy, 0.5, state).to_vector<double>();
  for (size_t i = 0; i < y.size(); ++i) CHECK((y[i] == 0.0) == (dx[i] == 0.0));
}

EMBER_CUDA_TEST_CASE("dropout of inf and NaN matches the cpu, NaN where dropped", "[dropout]") {
  // Both backends compute dropout_apply = x * mask * scale: a dropped inf or NaN is NaN on
  // the GPU too (it used to store 0). NaN compares unequal, so the check is by hand.
  const GeneratorState state{20240611, 12};
  std::vector<float> values;
  for (int i = 0; i < 1001; ++i) values.push_back(i % 3 == 0 ? INFINITY : i % 3 == 1 ? NAN : -2.5f);
  for (DType dtype : {kFloat32, kFloat16, kFloat64}) {
    for (double p : {0.3, 0.5, 1.0}) {
      const Tensor x = from_vector<float>(values, {1001}).to(dtype);
      const std::vector<double> cpu = kernels::dropout(x, p, state).to_vector<double>();
      const std::vector<double> gpu = kernels::dropout(x.to(kCUDA), p, state).to_vector<double>();
      REQUIRE(gpu.size() == cpu.size());
      int64_t nan_outputs = 0;
      for (size_t i = 0; i < cpu.size(); ++i) {
        INFO(dtype_name(dtype) << " p " << p << " element " << i << ": cpu " << cpu[i] << ", cuda " << gpu[i]);
        CHECK(std::isnan(cpu[i]) == std::isnan(gpu[i]));
        if (!std::isnan(cpu[i])) CHECK(cpu[i] == gpu[i]);
        nan_outputs += std::isnan(cpu[i]);
      }
      CHECK(nan_outputs > 334);  // every NaN input, plus the dropped infs
    }
  }
}

EMBER_CUDA_TEST_CASE("max_pool2d_backward rejects a gradient that does not pool x like the cpu", "[pool][errors]") {
  const Tensor x = randn({1, 2, 4, 4}).to(kCUDA);
  test::expect_error_contains([&] { kernels::max_pool2d_backward(ones({1, 2, 3, 2}).to(kCUDA), x, {2, 2, 0}); },
                              {"max_pool2d_backward", "gradient", "[1, 2, 3, 2]", "[1, 2, 2, 2]"});
  test::expect_error_contains([&] { kernels::max_pool2d_backward(ones({1, 2, 2, 2}), x, {2, 2, 0}); },
                              {"max_pool2d_backward"});
}

EMBER_CUDA_TEST_CASE("batch_norm updates f64 running statistics in double like the cpu", "[batchnorm]") {
  // The update is batch_norm_running_update in double on both backends (CUDA used the input's
  // compute type, float, for f32 and f16 x). Integer inputs over 8 values per channel make the
  // batch statistics exact on both sides, so only the update's own rounding is left: a few
  // double ulps (FMA on the GPU), where a float update is off by ~1e-8.
  std::vector<float> values(2 * 3 * 2 * 2);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 5) % 11);
  const Tensor running_mean = from_vector<double>({0.1, 0.3, -0.7}, {3});
  const Tensor running_var = from_vector<double>({0.7, 1.1, 1.3}, {3});
  for (DType dtype : {kFloat32, kFloat16, kFloat64}) {
    for (DType buffers : {kFloat64, kFloat32}) {
      expect_all_match_cpu(
          [&](auto& in) {
            const Tensor rm = in[1].clone(), rv = in[2].clone();
            Tensor mean, invstd;
            kernels::batch_norm_stats(in[0], rm, rv, 0.1, 1e-5, &mean, &invstd);
            CHECK(rm.dtype() == buffers);
            return std::vector<Tensor>{mean, rm, rv};
          },
          {from_vector<float>(values, {2, 3, 2, 2}).to(dtype), running_mean.to(buffers), running_var.to(buffers)},
          1e-14, std::string("batch_norm running stats ") + dtype_name(dtype) + " x, " + dtype_name(buffers) +
                     " buffers");
    }
  }
}
