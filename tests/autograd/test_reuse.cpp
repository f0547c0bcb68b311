// The reusing forms relu(Tensor&&) and add(Tensor&&, b): they write into a temporary's
// bytes only when nothing else can see them, and give the same values and gradients.
#include <cstring>

#include "autograd/ops.h"
#include "core/generator.h"
#include "kernels/factories.h"
#include "tests/support/expect.h"

using namespace ember;

TEST_CASE("relu(add(temporary, b)) reuses the temporary's bytes and gives the same gradients", "[autograd][reuse]") {
  manual_seed(3);
  const Tensor x = randn({4, 5}).requires_grad_();
  const Tensor b = randn({4, 5}).requires_grad_();
  Tensor t = mul(x, 2.0);  // MulBackward by a scalar saves nothing
  const void* bytes = t.data_ptr();
  const Tensor reused = relu(add(std::move(t), b));
  CHECK(reused.data_ptr() == bytes);
  sum(mul(reused, reused)).backward();
  const Tensor gx = x.grad().clone(), gb = b.grad().clone();

  x.zero_grad();
  b.zero_grad();
  const Tensor kept = mul(x, 2.0);  // an lvalue: the const& forms allocate
  const Tensor plain = relu(add(kept, b));
  CHECK(plain.data_ptr() != kept.data_ptr());
  sum(mul(plain, plain)).backward();
  CHECK(std::memcmp(reused.data_ptr(), plain.data_ptr(), plain.nbytes()) == 0);
  test::expect_close(x.grad(), gx, 0.0, "x gradient");
  test::expect_close(b.grad(), gb, 0.0, "b gradient");
}

TEST_CASE("a temporary that a node saved, or that is viewed, is not reused", "[autograd][reuse]") {
  manual_seed(4);
  const Tensor x = randn({6}).requires_grad_();
  Tensor e = exp(x);  // ExpBackward saves its output
  const void* bytes = e.data_ptr();
  const Tensor r = relu(std::move(e));  // exp's node holds the bytes: relu allocates
  CHECK(r.data_ptr() != bytes);
  sum(r).backward();  // exp's saved output is intact: d relu(exp(x)) / dx = exp(x)
  test::expect_close(x.grad(), exp(x.detach()), 0.0, "gradient through exp");

  Tensor base = mul(x, 1.0);
  const Tensor view = base.reshape(Shape{2, 3});
  const Tensor out = relu(std::move(base));  // the view shares the bytes
  CHECK(out.data_ptr() != view.data_ptr());
  const Tensor leaf = randn({3}).requires_grad_();
  const Tensor from_leaf = relu(Tensor(leaf));  // a handle to a leaf that requires grad: never written
  CHECK(from_leaf.data_ptr() != leaf.data_ptr());
}
