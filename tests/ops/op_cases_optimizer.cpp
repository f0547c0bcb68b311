// The kernels with no autograd: fused optimizer updates, gradient unscaling, random draws and
// arange. Compared with the CPU in the same dtype: their state is stored in that dtype, and
// the storage's rounding between steps is part of what is compared. Both sides round, so the
// error models count each rounding twice: a step's roundings are kSgdStepRoundings and
// kAdamStepRoundings (tests/support/error_bound.h counts them); three steps store p and each
// buffer three times.
// Random draws and arange are the same bits on every device.
#include "core/generator.h"
#include "kernels/ops.h"
#include "tests/ops/op_case.h"

namespace ember::test {
namespace {

const std::vector<Shape> kSizes = {{0}, {1}, {7}, {1000003}};

TensorOptions like(const Tensor& t) { return TensorOptions(t.dtype()).device(t.device()); }

}  // namespace

std::vector<OpCase> optimizer_cases() {
  std::vector<OpCase> cases;
  for (const Shape& shape : kSizes) {
    const std::string s = " " + shape.str();
    // Three SGD steps with momentum (the first sets the buffer), nesterov and weight decay.
    for (bool nesterov : {false, true}) {
      cases.push_back(OpCase("optimizer", std::string(nesterov ? "sgd nesterov" : "sgd") + s,
                             {Constant(shape), Constant(shape), Constant(shape), Constant(shape)},
                             [nesterov](const Inputs& in) {
                               kernels::SgdOptions o;
                               o.lr = 0.1;
                               o.momentum = 0.9;
                               o.weight_decay = 0.01;
                               o.nesterov = nesterov;
                               const Tensor p = in[0].clone(), buf = zeros_like(in[0]);
                               for (int step = 1; step <= 3; ++step)
                                 kernels::sgd_step_(p, in[step], buf, o, step == 1);
                               return p;
                             })
                          .no_backward()
                          .against_same_dtype()
                          .computed(2 * 3 * kSgdStepRoundings)
                          .stored(2 * 3 * 2));
    }
    // Three Adam / AdamW steps; the moments start at zero.
    for (bool decoupled : {false, true}) {
      cases.push_back(OpCase("optimizer", std::string(decoupled ? "adamw" : "adam") + s,
                             {Constant(shape), Constant(shape), Constant(shape), Constant(shape)},
                             [decoupled](const Inputs& in) {
                               kernels::AdamOptions o;
                               o.lr = 0.01;
                               o.weight_decay = 0.1;
                               o.decoupled = decoupled;
                               const Tensor p = in[0].clone(), m = zeros_like(in[0]), v = zeros_like(in[0]);
                               for (int step = 1; step <= 3; ++step) kernels::adam_step_(p, in[step], m, v, o, step);
                               return add(p, add(m, v));  // all three states in one comparison
                             })
                          .no_backward()
                          .against_same_dtype()
                          .computed(2 * 3 * kAdamStepRoundings)
                          .stored(2 * (3 * 3 + 2)));
    }
    // fp32 master gradients from a gradient of any floating dtype, accumulating.
    cases.push_back(OpCase("optimizer", "unscale_grad_" + s, {Constant(shape), Constant(shape)},
                           [](const Inputs& in) {
                             const Tensor master = in[0].to(DType::f32).clone();
                             const Tensor found_inf = zeros({1}, TensorOptions(DType::f32).device(in[0].device()));
                             kernels::unscale_grad_(master, mul(in[1], 256.0), 1.0 / 256.0, true, found_inf);
                             return add(master, found_inf);  // a raised flag would add 1 everywhere
                           })
                        .no_backward());
    // Random draws and arange: the same numbers on every device (Philox, core/philox.h).
    cases.push_back(OpCase("optimizer", "rand" + s, {Constant({1})},
                           [shape](const Inputs& in) {
                             manual_seed(5);
                             return rand(shape, like(in[0]), -2.0, 3.0);
                           })
                        .no_backward()
                        .against_same_dtype()
                        .exact());
    cases.push_back(OpCase("optimizer", "randn" + s, {Constant({1})},
                           [shape](const Inputs& in) {
                             manual_seed(6);
                             return randn(shape, like(in[0]), 1.0, 2.0);
                           })
                        .no_backward()
                        .against_same_dtype()
                        .exact());
    cases.push_back(OpCase("optimizer", "arange" + s, {Constant({1})},
                           [n = shape.numel()](const Inputs& in) {
                             return arange(-3.0, -3.0 + 0.5 * static_cast<double>(n), 0.5, like(in[0]));
                           })
                        .no_backward()
                        .against_same_dtype()
                        .exact());
  }
  // Successive draws continue one stream on every device.
  cases.push_back(OpCase("optimizer", "rand then randn then rand, one stream", {Constant({1})},
                         [](const Inputs& in) {
                           manual_seed(9);
                           rand({1001}, like(in[0]));
                           randn({7}, like(in[0]));
                           return rand({513}, like(in[0]));
                         })
                      .no_backward()
                      .against_same_dtype()
                      .exact());
  // Any inf or NaN in a gradient raises the flag (and is never cleared by a clean one).
  cases.push_back(OpCase("optimizer", "unscale_grad_ flag with an inf [9]", {Constant({9})},
                         [](const Inputs& in) {
                           const Tensor master = zeros({9}, TensorOptions(DType::f32).device(in[0].device()));
                           const Tensor found_inf = zeros({1}, TensorOptions(DType::f32).device(in[0].device()));
                           kernels::unscale_grad_(master, div(in[0], sub(in[0], in[0])), 1.0, false, found_inf);
                           kernels::unscale_grad_(master, in[0], 1.0, false, found_inf);
                           return found_inf;
                         })
                      .no_backward());
  return cases;
}

}  // namespace ember::test
