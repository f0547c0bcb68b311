// Host <-> device and device <-> device copies, converting dtypes on the way. The ops
// themselves are compared on every device by the op contract (tests/ops/); this is the
// movement between devices, which only a GPU has.
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "memory/empty.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;
using test::expect_close;

EMBER_CUDA_TEST_CASE("copies between dtypes and devices convert like cast", "[transfer][cast]") {
  const std::vector<DType> all = {kFloat32, kFloat64, kFloat16, kInt64, kUInt8};
  const Tensor host = rand({1000003}, {}, 0.0, 200.0);  // non-negative and < 256: defined for u8 too
  for (DType to : all) {
    const std::string name = std::string("copy_ f32 -> ") + dtype_name(to);
    Tensor on_gpu = empty(host.shape(), TensorOptions(to).device(kCUDA));
    kernels::copy_(on_gpu, host);  // host -> device, converting on the GPU when dtypes differ
    expect_close(on_gpu.to(kCPU), kernels::cast(host, to), 0, name + " host->device");
    Tensor device_copy = empty(host.shape(), TensorOptions(kFloat32).device(kCUDA));
    kernels::copy_(device_copy, on_gpu);  // device -> device
    Tensor back = empty(host.shape(), TensorOptions(kFloat64));
    kernels::copy_(back, on_gpu);  // device -> host with a conversion
    expect_close(device_copy.to(kCPU), kernels::cast(kernels::cast(host, to), kFloat32), 0, name + " device->device");
    expect_close(back, kernels::cast(kernels::cast(host, to), kFloat64), 0, name + " device->host");
  }
  const Tensor none = zeros({0, 4}, TensorOptions(kCUDA));
  CHECK(none.to(kCPU).numel() == 0);
  CHECK(kernels::cast(none, kFloat16).shape() == Shape{0, 4});
}
