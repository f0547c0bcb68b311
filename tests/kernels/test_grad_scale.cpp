// unscale_grad_ (kernels/cpu/grad_scale.cpp): master = (accumulate ? master : 0) + grad / scale in fp32,
// and the inf/NaN flag, for f16, f32 and f64 gradients. Values are exact: the scales are powers of two.
#include <cmath>
#include <limits>

#include "kernels/ops.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

TEST_CASE("unscale_grad_ divides by the scale into fp32 and accumulates", "[grad_scale]") {
  for (DType dtype : {kFloat16, kFloat32, kFloat64}) {
    INFO(dtype_name(dtype));
    const Tensor grad = from_vector<float>({1024.f, -2048.f, 0.5f, 0.f}, Shape{2, 2}).to(dtype);
    Tensor master = full({2, 2}, 123.0);  // overwritten when not accumulating
    Tensor found = zeros({1});
    kernels::unscale_grad_(master, grad, 1.0 / 1024.0, false, found);
    expect_values(master, {1.0, -2.0, 0.5 / 1024.0, 0.0}, 0.0, "unscale_grad");
    kernels::unscale_grad_(master, grad, 1.0 / 1024.0, true, found);
    expect_values(master, {2.0, -4.0, 1.0 / 1024.0, 0.0}, 0.0, "unscale_grad accumulate");
    CHECK(found.item<float>() == 0.0f);
  }
}

TEST_CASE("unscale_grad_ flags inf and NaN and never clears the flag", "[grad_scale]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (float bad : {inf, -inf, nan}) {
    for (DType dtype : {kFloat16, kFloat32}) {
      INFO(bad << " " << dtype_name(dtype));
      Tensor master = zeros({3});
      Tensor found = zeros({1});
      kernels::unscale_grad_(master, from_vector<float>({1.f, bad, 2.f}, Shape{3}).to(dtype), 0.5, false, found);
      CHECK(found.item<float>() == 1.0f);
      kernels::unscale_grad_(master, from_vector<float>({1.f, 1.f, 1.f}, Shape{3}).to(dtype), 0.5, false, found);
      CHECK(found.item<float>() == 1.0f);  // a later finite gradient does not clear it
    }
  }
  // A finite f32 gradient whose unscaled value overflows fp32 is flagged too.
  Tensor master = zeros({1});
  Tensor found = zeros({1});
  kernels::unscale_grad_(master, full({1}, 3e38), 4.0, false, found);
  CHECK(found.item<float>() == 1.0f);
}

TEST_CASE("unscale_grad_ checks its arguments", "[grad_scale]") {
  Tensor found = zeros({1});
  expect_error_contains([&] { kernels::unscale_grad_(zeros({3}), zeros({4}), 1.0, false, found); },
                        {"unscale_grad", "[3]", "[4]"});
  expect_error_contains([&] { kernels::unscale_grad_(zeros({3}).to(kFloat16), zeros({3}), 1.0, false, found); },
                        {"unscale_grad", "master_grad"});
  expect_error_contains([&] { kernels::unscale_grad_(zeros({3}), zeros({3}), 0.0, false, found); },
                        {"unscale_grad", "inverse loss scale", "0"});
}
