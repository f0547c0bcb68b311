// Dispatch runs a CUDA op with its tensors' device current and gives the caller's back.
// With one GPU only the "back" half can be seen; with two, the op on cuda:1 is checked too.
#include "core/cuda_runtime.h"
#include "kernels/factories.h"
#include "kernels/ops.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;

EMBER_CUDA_TEST_CASE("an op on a CUDA tensor runs on its device and restores the current one", "[device]") {
  const int devices = cuda::device_count();
  const Tensor a = ones({1000}).to(Device(DeviceType::cuda, devices - 1));
  {
    cuda::DeviceGuard guard(Device(DeviceType::cuda, 0));
    CHECK(cuda::current_device() == 0);
    const Tensor b = kernels::binary(kernels::BinaryOp::add, a, a);
    CHECK(cuda::current_device() == 0);  // the add ran on cuda:(devices-1) and switched back
    CHECK(b.device() == a.device());
    for (double v : b.to(kCPU).to_vector<double>()) CHECK(v == 2.0);
  }
  { cuda::DeviceGuard cpu_guard(kCPU); CHECK(cuda::current_device() == 0); }  // a CPU device changes nothing
}
