// CUDA vs CPU for the factories' fillers (kernels/cuda/random.cu): after the same
// manual_seed, rand and randn give the same numbers on both backends, and the
// generator's offset advances the same way. Skipped without a GPU.
//
// Tolerances: uniform draws are the same float arithmetic on both sides (only a
// fused vs unfused multiply-add can move the last bit): 1e-6. Normal draws also go
// through logf/cosf from two math libraries (a few ulp apart): 1e-6 relative to
// 1 + |x| still holds. f16 rounds those floats to half, where a last-bit difference
// can flip the rounding by one half ulp (2^-11 relative): 1e-3.
#include <algorithm>
#include <string>
#include <vector>

#include "core/generator.h"
#include "kernels/ops.h"
#include "tests/support/op_contract.h"

using namespace ember;
using test::expect_close;
using test::expect_values;

namespace {

constexpr uint64_t kSeed = 20240611;
const std::vector<int64_t> kSizes = {1, 7, 1000003, 0};

double tol_for(DType dtype) { return dtype == kFloat16 ? 1e-3 : 1e-6; }

// Draws with `draw` on the CPU and on CUDA from the same seed and compares.
template <class Draw>
void expect_same_draws(const Draw& draw, DType dtype, const std::string& name) {
  manual_seed(kSeed);
  const Tensor cpu = draw(TensorOptions(dtype));
  const GeneratorState after_cpu = generator_state();
  manual_seed(kSeed);
  const Tensor gpu = draw(TensorOptions(dtype).device(kCUDA));
  REQUIRE(gpu.is_cuda());
  CHECK(generator_state().offset == after_cpu.offset);  // both reserved the same counters
  expect_close(gpu.to(kCPU), cpu, tol_for(dtype), name + " " + dtype_name(dtype));
}

}  // namespace

EMBER_CUDA_TEST_CASE("rand and randn give the same numbers on CUDA and the CPU", "[random]") {
  for (DType dtype : {kFloat32, kFloat64, kFloat16}) {
    for (int64_t n : kSizes) {
      const std::string size = " [" + std::to_string(n) + "]";
      expect_same_draws([n](TensorOptions o) { return rand({n}, o); }, dtype, "rand" + size);
      expect_same_draws([n](TensorOptions o) { return rand({n}, o, -2.0, 3.0); }, dtype, "rand(-2, 3)" + size);
      expect_same_draws([n](TensorOptions o) { return randn({n}, o); }, dtype, "randn" + size);
      expect_same_draws([n](TensorOptions o) { return randn({n}, o, 1.0, 2.0); }, dtype, "randn(1, 2)" + size);
    }
  }
}

EMBER_CUDA_TEST_CASE("successive draws continue the same stream on both backends", "[random]") {
  // Odd sizes leave unused lanes in the last Philox counter: the next draw must skip them alike.
  auto draws = [](Device device) {
    const TensorOptions o = TensorOptions(kFloat32).device(device);
    manual_seed(kSeed);
    return std::vector<Tensor>{rand({7, 3}, o), randn({5}, o), rand({1001}, o, 0.5, 1.5), randn({3}, o)};
  };
  const std::vector<Tensor> cpu = draws(kCPU);
  const std::vector<Tensor> gpu = draws(kCUDA);
  for (size_t i = 0; i < cpu.size(); ++i) expect_close(gpu[i].to(kCPU), cpu[i], 1e-6, "draw " + std::to_string(i));
  manual_seed(kSeed);
  const Tensor first = rand({1000}, TensorOptions(kCUDA));
  const Tensor second = rand({1000}, TensorOptions(kCUDA));
  CHECK(first.to_vector<float>() != second.to_vector<float>());  // the offset advanced: new numbers
}

EMBER_CUDA_TEST_CASE("uniform draws stay in range on CUDA", "[random]") {
  manual_seed(kSeed);
  const std::vector<float> u = rand({1000003}, TensorOptions(kCUDA), -2.0, 3.0).to_vector<float>();
  float lo = 1e9f, hi = -1e9f;
  for (float v : u) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  CHECK(lo >= -2.0f);
  CHECK(hi < 3.0f);
  CHECK(lo < -1.99f);  // a million draws reach both ends
  CHECK(hi > 2.99f);
}

EMBER_CUDA_TEST_CASE("arange on CUDA matches the CPU", "[random][arange]") {
  const Tensor carrier = zeros({1});  // only carries the device into fn
  for (DType dtype : {kInt64, kFloat32, kFloat64, kFloat16, kUInt8}) {
    test::expect_matches_cpu(
        [dtype](auto& in) { return arange(0, 200, 1, TensorOptions(dtype).device(in[0].device())); }, {carrier}, 0,
        std::string("arange(0, 200) ") + dtype_name(dtype));
  }
  test::expect_matches_cpu([](auto& in) { return arange(0, 1000003, 1, TensorOptions(kInt64).device(in[0].device())); },
                           {carrier}, 0, "arange(0, 1000003)");
  test::expect_matches_cpu(
      [](auto& in) { return arange(-1.5, 2.0, 0.37, TensorOptions(kFloat32).device(in[0].device())); }, {carrier},
      1e-7, "arange(-1.5, 2, 0.37) f32");  // start + step * i in double, rounded once to f32
  expect_values(arange(3, 9, 2, TensorOptions(kInt64).device(kCUDA)), {3, 5, 7}, 0, "arange by hand");
  CHECK(arange(5, 5, 1, TensorOptions(kCUDA)).numel() == 0);
}
