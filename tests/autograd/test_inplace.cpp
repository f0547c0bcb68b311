// The version counter (core/tensor.h: Storage::version) and what autograd does with it:
// a node refuses a saved tensor that an in-place write changed after it was saved
// (autograd/node.h: Node::saved), and the in-place Tensor methods refuse a tensor that
// requires grad while grad mode is on (autograd/tensor_methods.cpp).
#include "autograd/grad_mode.h"
#include "kernels/ops.h"
#include "memory/empty.h"
#include "models/batch_norm.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"
#include "train/mixed_precision_optimizer.h"

using namespace ember;
using namespace ember::test;

namespace {

std::string modified_message(const std::string& node, const std::string& shape, int saved_at, int now) {
  return "one of the tensors needed for gradient computation has been modified by an in-place operation: " + node +
         " saved a " + shape + " tensor at version " + std::to_string(saved_at) + ", it is now at version " +
         std::to_string(now) + "; make the in-place change after backward(), or make it on a clone()";
}

}  // namespace

TEST_CASE("in-place: a write into a tensor saved for backward is refused with node, shape and versions",
          "[inplace][autograd][errors]") {
  Tensor x = randn({2, 1, 8, 8}).requires_grad_();
  Tensor w = randn({64, 1, 5, 5}).requires_grad_();  // randn writes once: version 1
  CHECK(w.version() == 1);
  Tensor loss = sum(conv2d(x, w));  // conv2d saves w for dx (and x for dw)
  {
    NoGradGuard no_grad;
    w.add_(ones({64, 1, 5, 5}), 0.5);  // the kind of update a misplaced optimizer step makes
  }
  CHECK(w.version() == 2);
  REQUIRE_THROWS_WITH(loss.backward(), modified_message("conv2d", "[64, 1, 5, 5]", 1, 2));
  // Nothing reached the leaves: the error came before any gradient was accumulated into them.
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("in-place: the same graph without the write runs backward and gives the right gradient", "[inplace][autograd]") {
  // The control for the case above, and for a saved output: exp saves y = exp(x).
  Tensor x = from_vector<float>({0, 1}, {2}).requires_grad_();
  Tensor y = exp(x);
  sum(y).backward();
  // dy * y with dy = 1: expf's 2 ulps, 4 units (tests/support/error_bound.h)
  expect_values(x.grad(), {1.0, std::exp(1.0)}, 4 * test::unit_roundoff(kFloat32), "d exp(x)/dx");

  // The same with the saved output scaled behind autograd's back: refused instead of giving 2 * exp(x).
  Tensor x2 = from_vector<float>({0, 1}, {2}).requires_grad_();
  Tensor y2 = exp(x2);
  Tensor loss = sum(y2);
  {
    NoGradGuard no_grad;
    y2.mul_(2.0);
  }
  REQUIRE_THROWS_WITH(loss.backward(), modified_message("exp", "[2]", 0, 1));
  CHECK_FALSE(x2.grad().defined());
}

TEST_CASE("in-place: views share the version counter with their base", "[inplace][autograd]") {
  Tensor base = zeros({6});  // version 1 (the fill)
  Tensor view = base.reshape({2, 3});
  CHECK(view.version() == 1);
  view.fill_(2.0);
  CHECK(base.version() == 2);
  CHECK(view.version() == 2);
  base.mul_(3.0);
  CHECK(view.version() == 3);
  expect_values(view, {6, 6, 6, 6, 6, 6}, 0, "the view sees the base's write");

  // matmul saves A (the view) for dB; a write through the base is a write to the view.
  Tensor w = randn({3, 4}).requires_grad_();
  Tensor loss = sum(matmul(view, w));
  base.add_(ones({6}));  // base does not require grad: allowed with grad mode on
  REQUIRE_THROWS_WITH(loss.backward(), modified_message("matmul", "[2, 3]", 3, 4));
}

TEST_CASE("in-place: detach() shares the version counter, so a write through it is caught", "[inplace][autograd]") {
  Tensor w = from_vector<float>({1, 2, 3}, {3}).requires_grad_();
  Tensor a = from_vector<float>({4, 5, 6}, {3});
  Tensor loss = sum(w * w);  // mul saves w twice, and reads it for each operand's gradient
  Tensor d = w.detach();
  CHECK(d.version() == w.version());
  d.add_(a);  // d does not require grad, so this is allowed even with grad mode on...
  CHECK(w.version() == d.version());
  CHECK(w.version() == 1);
  // ...and the node that saved w (as its input 0, shape [3]) sees it.
  REQUIRE_THROWS_WITH(loss.backward(), modified_message("mul", "[3]", 0, 1));
  // A clone() has its own counter.
  Tensor c = w.clone();
  const uint64_t before = w.version();
  c.detach().fill_(0.0);
  CHECK(w.version() == before);
}

TEST_CASE("in-place: writing into a tensor no node saved is fine", "[inplace][autograd]") {
  Tensor x = from_vector<float>({1, 2}, {2}).requires_grad_();
  Tensor b = from_vector<float>({10, 20}, {2});
  Tensor loss = sum(x + b);  // add saves neither operand
  b.fill_(100.0);            // b is an input of the graph, but not a saved one
  loss.backward();
  expect_values(x.grad(), {1, 1}, 0, "d sum(x + b)/dx");
  // A saved tensor that backward does not read: mul saves both operands, but the gradient of x
  // needs only b, so a write into x (under NoGradGuard: x is a leaf) leaves that gradient right.
  x.zero_grad();
  Tensor product = sum(x * b);
  {
    NoGradGuard no_grad;
    x.mul_(2.0);
  }
  product.backward();
  expect_values(x.grad(), {100, 100}, 0, "d sum(x * b)/dx = b");
  // A tensor outside the graph entirely.
  Tensor unrelated = zeros({4});
  Tensor y = sum(exp(x));
  unrelated.add_(ones({4}));
  y.backward();
  // exp (4 units of a term) added to 100 (one rounding): 5 units of 100 + exp(2x), the result itself
  expect_values(x.grad(), {100 + std::exp(2.0), 100 + std::exp(4.0)}, 5 * test::unit_roundoff(kFloat32),
                "accumulated, at the doubled x");
}

TEST_CASE("in-place: a write after backward is fine, and the next graph saves the new version",
          "[inplace][autograd]") {
  Tensor w = from_vector<float>({1, 2}, {2}).requires_grad_();
  Tensor loss = sum(w * w);
  loss.backward();
  expect_values(w.grad(), {2, 4}, 0, "first backward");
  {
    NoGradGuard no_grad;
    w.add_(w.grad(), -0.5);  // w = (0, 0): the optimizer's place, after backward
  }
  w.zero_grad();
  sum(w * w).backward();
  expect_values(w.grad(), {0, 0}, 0, "second graph reads the updated w");

  // With retain_graph the saved tensors outlive the first backward, so a write before the second is caught.
  Tensor v = from_vector<float>({3}, {1}).requires_grad_();
  Tensor l = sum(v * v);
  l.backward(Tensor(), /*retain_graph=*/true);
  {
    NoGradGuard no_grad;
    v.fill_(5.0);
  }
  REQUIRE_THROWS_WITH(l.backward(), modified_message("mul", "[1]", 0, 1));
}

TEST_CASE("in-place: the Tensor methods refuse a leaf that requires grad while grad mode is on",
          "[inplace][autograd][errors]") {
  Tensor w = from_vector<float>({1, 2}, {2}).requires_grad_();
  REQUIRE_THROWS_WITH(w.add_(ones({2})),
                      "add_: a leaf tensor [2] that requires grad is being used in an in-place operation; update it "
                      "under NoGradGuard (as optimizers do) or use an out-of-place op");
  expect_error_contains([&] { w.mul_(2.0); }, {"mul_: a leaf tensor [2]", "NoGradGuard"});
  expect_error_contains([&] { w.fill_(0.0); }, {"fill_: a leaf tensor [2]"});
  expect_error_contains([&] { w.zero_(); }, {"zero_: a leaf tensor [2]"});
  expect_error_contains([&] { w.copy_(zeros({2})); }, {"copy_: a leaf tensor [2]"});
  expect_values(w, {1, 2}, 0, "refused writes change nothing");
  CHECK(w.version() == 0);  // from_vector's f32 host tensor is written by memcpy, not by a kernel

  // A computed tensor that requires grad is refused too: its graph would not see the write.
  Tensor y = w + 1.0;
  expect_error_contains([&] { y.mul_(3.0); },
                        {"mul_: a tensor [2] that requires grad (computed by add)", "does not record"});
}

TEST_CASE("in-place: under NoGradGuard the Tensor methods write into a leaf and bump its version",
          "[inplace][autograd]") {
  Tensor w = from_vector<float>({1, 2}, {2}).requires_grad_();
  NoGradGuard no_grad;
  w.add_(ones({2}), 2.0);
  CHECK(w.version() == 1);
  w.mul_(2.0);
  CHECK(w.version() == 2);
  w.copy_(from_vector<float>({7, 8}, {2}));
  CHECK(w.version() == 3);
  expect_values(w, {7, 8}, 0, "written");
  w.zero_();
  CHECK(w.version() == 4);
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
}

TEST_CASE("in-place: each in-place kernel entry point bumps every tensor it writes, once", "[inplace][kernels]") {
  Tensor t = empty({4}, kFloat32);
  CHECK(t.version() == 0);
  kernels::fill_(t, 1.0);
  CHECK(t.version() == 1);
  kernels::add_(t, ones({4}), 1.0);
  CHECK(t.version() == 2);
  kernels::mul_scalar_(t, 2.0);
  CHECK(t.version() == 3);
  Tensor src = ones({4});
  const uint64_t src_version = src.version();
  kernels::copy_(t, src);
  CHECK(t.version() == 4);
  CHECK(src.version() == src_version);  // a read is not a write
  kernels::copy_(t, t);                 // a copy onto itself writes nothing
  CHECK(t.version() == 4);
  kernels::uniform_(t, GeneratorState{1, 0}, 0.0, 1.0);
  CHECK(t.version() == 5);
  kernels::normal_(t, GeneratorState{1, 0}, 0.0, 1.0);
  CHECK(t.version() == 6);
  Tensor i = empty({3}, kInt64);
  kernels::arange_(i, 0.0, 1.0);
  CHECK(i.version() == 1);
  // Factories that fill through a kernel return version 1.
  CHECK(zeros({2}).version() == 1);
  CHECK(randn({2}).version() == 1);
  CHECK(arange(0, 3).version() == 1);

  // Mixed precision's unscale writes the master gradient and the inf flag (not the f16 gradient).
  Tensor master_grad = zeros({2});
  Tensor grad = from_vector<float>({2, 4}, {2}).to(kFloat16);
  Tensor found_inf = zeros({1});
  const uint64_t grad_version = grad.version();
  kernels::unscale_grad_(master_grad, grad, 0.5, /*accumulate=*/false, found_inf);
  CHECK(master_grad.version() == 2);
  CHECK(found_inf.version() == 2);
  CHECK(grad.version() == grad_version);
  expect_values(master_grad, {1, 2}, 0, "unscaled");
}

TEST_CASE("in-place: optimizer steps bump the parameter and their state, and catch a step before backward",
          "[inplace][optim]") {
  Tensor p = from_vector<float>({1, 2}, {2}).requires_grad_();
  optim::SGD sgd({p}, optim::SgdOptions(0.1).momentum(0.9));
  p.set_grad(ones({2}));
  sgd.step();  // runs under NoGradGuard: the leaf refusal does not apply
  CHECK(p.version() == 1);
  CHECK(sgd.momentum_buffer(0).version() == 1);
  sgd.step();
  CHECK(p.version() == 2);
  CHECK(sgd.momentum_buffer(0).version() == 2);
  // buf = 1, then 1.9; two steps' roundings, each of a term below 1 + |p| (updates 0.1 and 0.19)
  expect_values(p, {0.71, 1.71}, test::ErrorModel{0, 2 * test::kSgdStepRoundings, 0}.tolerance(kFloat32),
                "two SGD momentum steps");

  Tensor q = from_vector<float>({1, 2}, {2}).requires_grad_();
  optim::Adam adam({q}, optim::AdamOptions(0.1));
  q.set_grad(ones({2}));
  adam.step();
  CHECK(q.version() == 1);
  // The moments are optimizer state the test cannot reach by name; their versions are checked through the kernel.
  Tensor param = zeros({2}), g = ones({2}), m = zeros({2}), v = zeros({2});
  kernels::adam_step_(param, g, m, v, kernels::AdamOptions{}, 1);
  CHECK(param.version() == 2);
  CHECK(m.version() == 2);
  CHECK(v.version() == 2);
  CHECK(g.version() == 1);

  // The bug this catches: a step between forward and backward used to give gradients of the new weights.
  Tensor w = from_vector<float>({1, 2}, {2}).requires_grad_();
  optim::SGD sgd2({w}, optim::SgdOptions(0.1));
  Tensor loss1 = sum(w * w);
  loss1.backward();
  Tensor loss2 = sum(w * w);  // saves w at version 0
  sgd2.step();                // w -> version 1
  REQUIRE_THROWS_WITH(loss2.backward(), modified_message("mul", "[2]", 0, 1));
}

TEST_CASE("in-place: batch norm's running statistics are bumped by a training forward, not by eval",
          "[inplace][batch_norm]") {
  nn::BatchNorm2d bn(3);
  const Tensor& mean = bn.running_mean();
  const Tensor& var = bn.running_var();
  CHECK(mean.version() == 1);  // zeros()
  CHECK(var.version() == 1);   // ones()
  Tensor x = randn({4, 3, 2, 2}).requires_grad_();
  bn.forward(x);
  CHECK(mean.version() == 2);
  CHECK(var.version() == 2);
  bn.eval();
  Tensor eval_loss = sum(bn.forward(x));  // eval normalises with (and saves) the running mean itself
  CHECK(mean.version() == 2);
  // A training forward before the eval graph's backward changes the statistics that graph read.
  bn.train();
  bn.forward(x);
  CHECK(mean.version() == 3);
  REQUIRE_THROWS_WITH(eval_loss.backward(), modified_message("batch_norm", "[3]", 2, 3));
}

TEST_CASE("in-place: the mixed-precision step writes the masters and copies out to the f16 params",
          "[inplace][mixed_precision]") {
  Tensor p = from_vector<float>({1, 2}, {2}).to(kFloat16).requires_grad_();
  train::MixedPrecisionOptimizer opt({p}, [](std::vector<Tensor> masters) {
    return std::make_unique<optim::SGD>(std::move(masters), optim::SgdOptions(0.5));
  });
  const uint64_t p_before = p.version();
  const uint64_t master_before = opt.masters()[0].version();
  Tensor loss = sum(p.to(kFloat32)) * 0.5;  // f16 gradient 0.5 * 2^16: finite
  opt.scale_loss(loss).backward();
  opt.unscale_gradients();
  CHECK(opt.step());
  CHECK(opt.masters()[0].version() == master_before + 1);  // the inner SGD step
  CHECK(p.version() == p_before + 1);                        // the copy-out
  // exact: the scaled gradient 0.5 * 2^16, its unscaling, 0.5 * 0.5 and the f16 copy are all exact
  expect_values(p, {0.75, 1.75}, 0, "p - 0.5 * 0.5");
}
