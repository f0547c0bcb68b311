// dropout and feature dropout (Dropout2d): the mask is a pure function of the generator state
// reserved at forward (kernels/dropout_math.h), so the node keeps that state (16 bytes) instead
// of a mask tensor, and backward redraws the same mask on dy. Under checkpointing the restored
// generator state reproduces the same draw.
//
//   Tensor h = ember::dropout2d(conv2->forward(x), 0.5, is_training());   // whole channels
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
  DropoutBackward(double p, GeneratorState state, int64_t group) : p_(p), state_(state), group_(group) {}
  const char* name() const override { return group_ == 1 ? "dropout" : "feature_dropout"; }
  std::vector<Tensor> apply(const Tensor& dy) override { return {kernels::dropout(dy, p_, state_, group_)}; }

 private:
  double p_;
  GeneratorState state_;
  int64_t group_;
};

// Elements `group` at a time share one draw: 1 for dropout, a channel's values for feature dropout.
Tensor dropout_groups(const Tensor& x, double p, bool training, int64_t group, const char* op) {
  EMBER_CHECK(x.defined(), op << ": argument 'x' is an undefined tensor");
  EMBER_CHECK(p >= 0.0 && p <= 1.0, op << ": probability must be in [0, 1], got " << p << " for " << x.shape());
  if (!training || p == 0.0 || x.numel() == 0) return x;  // like PyTorch: the input itself
  const GeneratorState state = reserve_random(kernels::dropout_counters(x.numel() / group));
  Tensor y = kernels::dropout(x, p, state, group);
  if (autograd::any_requires_grad({x}))
    autograd::record(y, std::make_shared<DropoutBackward>(p, state, group), {x});
  return y;
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training) { return dropout_groups(x, p, training, 1, "dropout"); }

Tensor feature_dropout(const Tensor& x, double p, bool training) {
  EMBER_CHECK(x.defined(), "feature_dropout: argument 'x' is an undefined tensor");
  EMBER_CHECK(x.dim() >= 2, "feature_dropout: expected an input [N, C, ...] of at least 2 dims, got " << x.shape());
  const int64_t channels = x.size(0) * x.size(1);
  return dropout_groups(x, p, training, channels == 0 ? 1 : x.numel() / channels, "feature_dropout");
}

Tensor dropout2d(const Tensor& x, double p, bool training) {
  EMBER_CHECK(x.defined(), "dropout2d: argument 'x' is an undefined tensor");
  EMBER_CHECK(x.dim() == 3 || x.dim() == 4,
              "dropout2d: expected an input [N, C, H, W] (or one image [C, H, W]), got " << x.shape());
  const int64_t plane = x.size(-1) * x.size(-2);
  return dropout_groups(x, p, training, plane == 0 ? 1 : plane, "dropout2d");
}

}  // namespace ember
