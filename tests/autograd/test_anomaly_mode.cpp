// Anomaly detection (autograd/anomaly_mode.h): the first op whose forward output or backward
// gradient is not finite is named, with the element; off, nothing is checked.
#include "autograd/anomaly_mode.h"
#include "autograd/ops.h"
#include "kernels/factories.h"
#include "tests/support/expect.h"

using namespace ember;
using test::expect_error_contains;

TEST_CASE("detect anomaly: a forward output that is NaN names the op and the element", "[autograd]") {
  Tensor x = from_vector<float>({1, 4, -1, 9}, {2, 2}).requires_grad_();
  {
    DetectAnomalyGuard anomaly;
    expect_error_contains([&] { (void)sqrt(x); }, {"detect anomaly", "forward output", "sqrt", "[2, 2]", "nan", "[1, 0]"});
  }
  CHECK_FALSE(AnomalyMode::is_enabled());  // the guard restored it
  CHECK(std::isnan(sqrt(x).to_vector<float>()[2]));  // off: no check
}

TEST_CASE("detect anomaly: a gradient that is not finite names the op in backward", "[autograd]") {
  Tensor x = from_vector<float>({0, 4}, {2}).requires_grad_();
  DetectAnomalyGuard anomaly;
  Tensor y = sum(sqrt(x));  // finite forward; d sqrt(x)/dx = inf at 0
  expect_error_contains([&] { y.backward(); }, {"detect anomaly", "gradient", "sqrt", "inf", "[0]"});
}
