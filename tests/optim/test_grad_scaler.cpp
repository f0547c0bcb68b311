// optim::GradScaler: PyTorch's dynamic loss-scaling rules (init 2^16, x2 after 2000 finite
// steps, x0.5 on inf/NaN) and a clear error when the scale underflows.
#include "optim/grad_scaler.h"
#include "tests/support/expect.h"

using namespace ember;
using test::expect_error_contains;

TEST_CASE("GradScaler starts at 2^16 and doubles after 2000 finite steps", "[grad_scaler]") {
  optim::GradScaler scaler;
  CHECK(scaler.scale() == 65536.0);
  for (int i = 0; i < 1999; ++i) scaler.update(false);
  CHECK(scaler.scale() == 65536.0);
  CHECK(scaler.growth_tracker() == 1999);
  scaler.update(false);
  CHECK(scaler.scale() == 131072.0);
  CHECK(scaler.growth_tracker() == 0);
}

TEST_CASE("GradScaler halves on inf/NaN and restarts the growth count", "[grad_scaler]") {
  optim::GradScaler scaler;
  for (int i = 0; i < 1500; ++i) scaler.update(false);
  scaler.update(true);
  CHECK(scaler.scale() == 32768.0);
  CHECK(scaler.growth_tracker() == 0);
  CHECK(scaler.skipped_steps() == 1);
  for (int i = 0; i < 1999; ++i) scaler.update(false);
  CHECK(scaler.scale() == 32768.0);  // the 1500 finite steps before the skip no longer count
  scaler.update(false);
  CHECK(scaler.scale() == 65536.0);
}

TEST_CASE("GradScaler::scale_loss multiplies the loss and its gradient seed", "[grad_scaler]") {
  optim::GradScalerOptions o;
  o.init_scale = 8.0;
  optim::GradScaler scaler(o);
  Tensor w = from_vector<float>({2.0f}, Shape{1}).requires_grad_();
  Tensor loss = sum(mul(w, w));
  scaler.scale_loss(loss).backward();
  CHECK(w.grad().item<float>() == 32.0f);  // 8 * d(w^2)/dw = 8 * 4
}

TEST_CASE("GradScaler: a scale that underflows is an error naming the value", "[grad_scaler]") {
  optim::GradScaler scaler;
  expect_error_contains(
      [&] {
        for (int i = 0; i < 1000; ++i) scaler.update(true);
      },
      {"GradScaler", "underflowed", "consecutive steps with inf/NaN", "precision = fp32"});
  expect_error_contains([] { optim::GradScalerOptions o; o.backoff_factor = 1.5; optim::GradScaler s(o); },
                        {"backoff_factor", "1.5"});
}
