// dropout: the mask is a pure function of the generator state reserved at
// forward (kernels/dropout_math.h), so the node keeps that state (16 bytes)
// instead of a mask tensor, and backward redraws the same mask on dy. Under
// checkpointing the restored generator state reproduces the same draw.
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "core/error.h"
#include "core/generator.h"
#include "kernels/dropout_math.h"
#include "kernels/ops.h"

namespace ember {

namespace {

class DropoutBackward final : public autograd::Node {
 public:
  DropoutBackward(double p, GeneratorState state) : p_(p), state_(state) {}
  const char* name() const override { return "dropout"; }
  std::vector<Tensor> apply(const Tensor& dy) override { return {kernels::dropout(dy, p_, state_)}; }

 private:
  double p_;
  GeneratorState state_;
};

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training) {
  EMBER_CHECK(x.defined(), "dropout: argument 'x' is an undefined tensor");
  EMBER_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability must be in [0, 1], got " << p << " for " << x.shape());
  if (!training || p == 0.0 || x.numel() == 0) return x;  // like PyTorch: the input itself
  const GeneratorState state = reserve_random(kernels::dropout_counters(x.numel()));
  Tensor y = kernels::dropout(x, p, state);
  if (autograd::any_requires_grad({x})) autograd::record(y, std::make_shared<DropoutBackward>(p, state), {x});
  return y;
}

}  // namespace ember
