#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/record.h"
#include "kernels/ops.h"
#include "memory/memory.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

TEST_CASE("a tensor used twice gets the sum of both gradients", "[autograd]") {
  Tensor x = from_vector<float>({1, 2, 3}, {3}).requires_grad_();
  Tensor y = sum(x * x + x);  // d/dx = 2x + 1
  y.backward();
  expect_values(x.grad(), {3, 5, 7}, 0, "x*x + x");
}

namespace {
// a + b whose backward hands its one incoming gradient tensor to both inputs, as PyTorch's add
// does (ember's own ops return a tensor of their own per input).
class SharedGradAddBackward final : public autograd::Node {
 public:
  const char* name() const override { return "shared_grad_add"; }
  std::vector<Tensor> apply(const Tensor& dy) override { return {dy, dy}; }
};

Tensor shared_grad_add(const Tensor& a, const Tensor& b) {
  Tensor y = kernels::binary(kernels::BinaryOp::add, a, b);
  if (autograd::any_requires_grad({a, b})) autograd::record(y, std::make_shared<SharedGradAddBackward>(), {a, b});
  return y;
}
}  // namespace

// The engine adds a node's later gradients into its first in place when it holds the only handle
// (autograd/engine.cpp). A gradient handed to two inputs is held twice: summing into it in
// place at one input would change the other's. Both orders of the walk are tried.
TEST_CASE("a gradient handed to two inputs is never summed into in place", "[autograd]") {
  // p and q each get the shared gradient and one of their own, in every order of the walk
  for (int form = 0; form < 4; ++form) {
    INFO("form " << form);
    Tensor x = from_vector<float>({1, -2}, {2}).requires_grad_();
    const Tensor p = x * 2.0, q = x * 5.0;
    const Tensor own = form % 2 == 0 ? p * 3.0 + q * 7.0 : q * 7.0 + p * 3.0;
    const Tensor y = form < 2 ? shared_grad_add(p, q) + own : own + shared_grad_add(p, q);
    sum(y).backward();
    expect_values(x.grad(), {48, 48}, 0, "dp = 1 + 3, dq = 1 + 7: 2 * 4 + 5 * 8");
  }
}

TEST_CASE("a second backward accumulates, zero_grad clears", "[autograd]") {
  Tensor x = from_vector<float>({1, 2}, {2}).requires_grad_();
  sum(x * 3.0).backward();
  sum(x * 3.0).backward();
  expect_values(x.grad(), {6, 6}, 0, "accumulated");
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
  Tensor y = sum(x * x);
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  expect_values(x.grad(), {4, 8}, 0, "retain_graph twice");
}

TEST_CASE("backward twice without retain_graph says why", "[autograd][errors]") {
  Tensor x = from_vector<float>({1, 2}, {2}).requires_grad_();
  Tensor y = sum(exp(x));
  y.backward();
  expect_error_contains([&] { y.backward(); }, {"saved tensors", "retain_graph"});
}

TEST_CASE("saved tensors are freed after backward", "[autograd][memory]") {
  Tensor w = randn({256, 256}).requires_grad_();
  const int64_t before = memory_stats(kCPU).allocated_bytes.current;
  int64_t after_forward = 0;
  {
    Tensor loss = sum(tanh(exp(w * 0.01)));
    after_forward = memory_stats(kCPU).allocated_bytes.current;
    CHECK(after_forward > before + 2 * 256 * 256 * 4);  // at least exp and tanh outputs are saved
    loss.backward();
    // Only w.grad (and the 0-d loss) remain: the saved activations are gone while loss still exists.
    CHECK(memory_stats(kCPU).allocated_bytes.current <= before + 256 * 256 * 4 + 1024);
  }
  CHECK(memory_stats(kCPU).allocated_bytes.current == before + 256 * 256 * 4);
}

TEST_CASE("NoGradGuard records nothing, detach cuts history", "[autograd]") {
  Tensor x = ones({2}).requires_grad_();
  {
    NoGradGuard guard;
    Tensor y = x * 2.0;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
  }
  Tensor z = (x * 2.0).detach();
  CHECK_FALSE(z.requires_grad());
  CHECK(z.shares_storage(z));
  expect_error_contains([&] { sum(z).backward(); }, {"does not require grad"});
}

TEST_CASE("backward needs a gradient for non-scalar outputs", "[autograd][errors]") {
  Tensor x = ones({3}).requires_grad_();
  Tensor y = x * 2.0;
  expect_error_contains([&] { y.backward(); }, {"[3]", "one-element"});
  y.backward(from_vector<float>({1, 2, 3}, {3}));
  expect_values(x.grad(), {2, 4, 6}, 0, "vector-jacobian product");
}

TEST_CASE("a deep chain does not overflow the stack", "[autograd]") {
  Tensor x = ones({1}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 20000; ++i) y = y + 0.0;
  sum(y).backward();
  expect_values(x.grad(), {1}, 0, "20000-node chain");
}

TEST_CASE("a post-accumulate-grad hook runs once per backward, when the leaf's gradient is whole", "[autograd]") {
  const Tensor w = from_vector<float>({1, 2}, {2}).requires_grad_();
  std::vector<std::vector<float>> seen;
  w.set_post_accumulate_grad_hook([&](const Tensor& leaf) { seen.push_back(leaf.grad().to_vector<float>()); });
  // w is used twice: the hook sees the sum of both uses' gradients, once.
  sum(add(mul(w, 3.0), mul(w, w))).backward();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == std::vector<float>{3 + 2 * 1, 3 + 2 * 2});
  sum(w).backward();  // a second backward accumulates, and the hook sees the total
  REQUIRE(seen.size() == 2);
  CHECK(seen[1] == std::vector<float>{6, 8});
  w.set_post_accumulate_grad_hook({});
  sum(w).backward();
  CHECK(seen.size() == 2);
  expect_error_contains([&] { mul(w, 2.0).set_post_accumulate_grad_hook([](const Tensor&) {}); }, {"not a leaf"});
}
