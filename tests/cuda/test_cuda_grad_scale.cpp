// CUDA vs CPU for the mixed-precision unscale-and-check (kernels/cuda/grad_scale.cu). Skipped without
// a GPU. Both sides compute float(g) * inv_scale (+ master) in fp32 with power-of-two scales: exact.
#include <limits>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "tests/support/op_contract.h"

using namespace ember;
using test::expect_close;

EMBER_CUDA_TEST_CASE("unscale_grad_ on cuda matches the CPU, flag included", "[grad_scale]") {
  const float inf = std::numeric_limits<float>::infinity();
  for (DType dtype : {kFloat16, kFloat32, kFloat64}) {
    for (int64_t n : {int64_t(1), int64_t(1000003), int64_t(0)}) {
      for (bool with_inf : {false, true}) {
        std::vector<float> values = mul(randn({n}), 1000.0).to_vector<float>();
        if (with_inf && n > 0) values[static_cast<size_t>(n / 2)] = inf;
        const Tensor grad = from_vector<float>(values, Shape{n}).to(dtype);
        const Tensor master = randn({n});
        Tensor results[2], flags[2];
        const Device devices[2] = {kCPU, kCUDA};
        for (int d = 0; d < 2; ++d) {
          results[d] = master.to(devices[d]).clone();
          flags[d] = zeros({1}, TensorOptions().device(devices[d]));
          kernels::unscale_grad_(results[d], grad.to(devices[d]), 1.0 / 256.0, true, flags[d]);
        }
        const std::string name = std::string("unscale_grad ") + dtype_name(dtype) + " n=" + std::to_string(n);
        if (!with_inf) expect_close(results[1].to(kCPU), results[0], 0.0, name);
        CHECK(flags[1].item<float>() == flags[0].item<float>());
        CHECK(flags[0].item<float>() == (with_inf && n > 0 ? 1.0f : 0.0f));
      }
    }
  }
}
