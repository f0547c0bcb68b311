// Differential tests: CUDA matmul (each GEMM provider) and transpose against the
// CPU reference. Skipped at run time without a GPU; always compiled.
#include <string>
#include <utility>
#include <vector>

#include "kernels/ops.h"
#include "kernels/providers.h"
#include "tests/support/op_contract.h"

using namespace ember;
using test::expect_gradcheck;
using test::expect_matches_cpu;

namespace {

// Selects a GEMM provider for one scope and restores the previous one.
class GemmProviderGuard {
 public:
  explicit GemmProviderGuard(kernels::GemmProvider provider) : previous_(kernels::gemm_provider()) {
    kernels::set_gemm_provider(provider);
  }
  ~GemmProviderGuard() { kernels::set_gemm_provider(previous_); }
  GemmProviderGuard(const GemmProviderGuard&) = delete;
  GemmProviderGuard& operator=(const GemmProviderGuard&) = delete;

 private:
  kernels::GemmProvider previous_;
};

Shape stored(int64_t batch, int64_t rows, int64_t cols, bool transposed) {
  if (transposed) std::swap(rows, cols);
  return batch > 0 ? Shape{batch, rows, cols} : Shape{rows, cols};
}

// f32: the GPU sums the K products in another order (and may use FMA differently);
// over K <= 100 terms of N(0, 1) that moves results by ~1e-6 relative, so 1e-4 has margin.
// f16 outputs differ by at most one f16 rounding of the fp32 result: 2^-11 ~ 4.9e-4, so 2e-3.
constexpr double kTolF32 = 1e-4;
constexpr double kTolF16 = 2e-3;

const std::vector<kernels::GemmProvider> kProviders = {kernels::GemmProvider::custom, kernels::GemmProvider::cublas};

}  // namespace

EMBER_CUDA_TEST_CASE("matmul matches cpu for each provider and transpose flag", "[matmul]") {
  // Odd sizes so no dimension is a multiple of a tile; 1 x 1 and K = 1 as edge cases.
  struct Case { int64_t m, k, n; };
  for (kernels::GemmProvider provider : kProviders) {
    GemmProviderGuard guard(provider);
    for (Case s : {Case{37, 53, 29}, Case{128, 96, 64}, Case{1, 1, 1}, Case{5, 1, 7}}) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          const std::string name = std::string("matmul ") + kernels::gemm_provider_name(provider) +
                                   (ta ? " A^T" : " A") + (tb ? " B^T " : " B ") + std::to_string(s.m) + "x" +
                                   std::to_string(s.k) + "x" + std::to_string(s.n);
          Tensor a = randn(stored(0, s.m, s.k, ta));
          Tensor b = randn(stored(0, s.k, s.n, tb));
          expect_matches_cpu([&](auto& in) { return kernels::matmul(in[0], in[1], ta, tb); }, {a, b}, kTolF32, name);
        }
      }
    }
  }
}

EMBER_CUDA_TEST_CASE("batched matmul matches cpu for each provider", "[matmul]") {
  for (kernels::GemmProvider provider : kProviders) {
    GemmProviderGuard guard(provider);
    const std::string p = kernels::gemm_provider_name(provider);
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const std::string flags = std::string(ta ? " A^T" : " A") + (tb ? " B^T" : " B");
        Tensor a = randn(stored(3, 37, 53, ta));
        Tensor b3 = randn(stored(3, 53, 29, tb));
        Tensor b2 = randn(stored(0, 53, 29, tb));
        auto fn = [&](auto& in) { return kernels::matmul(in[0], in[1], ta, tb); };
        expect_matches_cpu(fn, {a, b3}, kTolF32, "matmul 3-D x 3-D " + p + flags);
        expect_matches_cpu(fn, {a, b2}, kTolF32, "matmul 3-D x 2-D " + p + flags);
      }
    }
  }
}

EMBER_CUDA_TEST_CASE("matmul f16, K = 0 and empty operands match cpu", "[matmul][f16]") {
  for (kernels::GemmProvider provider : kProviders) {
    GemmProviderGuard guard(provider);
    const std::string p = kernels::gemm_provider_name(provider);
    auto fn = [](auto& in) { return matmul(in[0], in[1]); };
    expect_matches_cpu(fn, {randn({37, 53}).to(kFloat16), randn({53, 29}).to(kFloat16)}, kTolF16, "matmul f16 " + p);
    expect_matches_cpu(fn, {randn({2, 37, 53}).to(kFloat16), randn({53, 29}).to(kFloat16)}, kTolF16,
                       "matmul f16 3-D x 2-D " + p);
    expect_matches_cpu(fn, {randn({4, 0}), randn({0, 3})}, 0, "matmul K = 0 " + p);
    Tensor empty_rows = matmul(zeros({0, 3}).to(kCUDA), ones({3, 4}).to(kCUDA));
    CHECK(empty_rows.shape() == Shape{0, 4});
  }
}

EMBER_CUDA_TEST_CASE("matmul gradients on the GPU match cpu for each provider", "[matmul][gradcheck]") {
  for (kernels::GemmProvider provider : kProviders) {
    GemmProviderGuard guard(provider);
    const std::string p = kernels::gemm_provider_name(provider);
    // gradcheck runs in f64 on the inputs' device; the f64 GEMM must therefore work on CUDA.
    auto fn = [](auto& in) { return matmul(in[0], in[1]); };
    expect_gradcheck(fn, {randn({4, 5}, kFloat64).to(kCUDA), randn({5, 3}, kFloat64).to(kCUDA)}, "matmul 2-D " + p);
    expect_gradcheck(fn, {randn({2, 4, 5}, kFloat64).to(kCUDA), randn({5, 3}, kFloat64).to(kCUDA)},
                     "matmul 3-D x 2-D " + p);
    expect_gradcheck(fn, {randn({2, 4, 5}, kFloat64).to(kCUDA), randn({2, 5, 3}, kFloat64).to(kCUDA)},
                     "matmul 3-D x 3-D " + p);
  }
}

EMBER_CUDA_TEST_CASE("transpose matches cpu for every dim pair and dtype", "[transpose]") {
  auto fn01 = [](auto& in) { return transpose(in[0], 0, 1); };
  auto fn12 = [](auto& in) { return transpose(in[0], 1, 2); };
  auto fn02 = [](auto& in) { return transpose(in[0], 0, 2); };
  // A permutation copies bits: exact.
  expect_matches_cpu(fn01, {randn({70, 45})}, 0, "transpose 2-D");
  expect_matches_cpu(fn12, {randn({3, 40, 33})}, 0, "transpose batched matrices");
  expect_matches_cpu(fn02, {randn({3, 37, 5})}, 0, "transpose (0, 2)");
  expect_matches_cpu(fn01, {randn({2, 3, 4, 5}, kFloat64)}, 0, "transpose f64 4-D");
  expect_matches_cpu(fn12, {randn({5, 6, 7}).to(kFloat16)}, 0, "transpose f16");
  expect_matches_cpu(fn01, {arange(0, 210).reshape(Shape{5, 6, 7})}, 0, "transpose i64");
  expect_matches_cpu(fn01, {zeros({0, 3})}, 0, "transpose empty");
  expect_gradcheck([](auto& in) { return transpose(in[0], 0, 2); }, {randn({2, 3, 4}, kFloat64).to(kCUDA)},
                   "transpose (0, 2) on cuda");
}
