// Losses with every reduction (none, sum, mean): mse, l1, smooth L1 and Huber (two betas and deltas),
// binary cross entropy and its logits form (with weight and pos_weight), nll_loss and
// cross_entropy with class weights. Their terms, gradients and reductions on every device.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "tests/ops/op_case.h"

namespace ember::test {
namespace {

using kernels::UnaryOp;

const std::vector<Reduction> kReductions = {Reduction::None, Reduction::Sum, Reduction::Mean};

// A case of an elementwise loss reduced `r`: its terms are all >= 0, so a sum or mean of n of them
// is its own magnitude (the default |result| + 1 covers it); none is elementwise.
OpCase reduced_case(const std::string& name, std::vector<InputSpec> inputs, OpFn fn, Reduction r, int64_t n) {
  OpCase c("loss", name + " reduction " + reduction_name(r), std::move(inputs), std::move(fn));
  if (r != Reduction::None) c.sums(n);
  return c;
}

// Reduces elementwise magnitudes as the loss reduces its terms: summed (divided by n for a mean),
// or left as they are.
Tensor reduce_like(const Tensor& m, Reduction r) {
  if (r == Reduction::None) return m;
  const Tensor total = sum(m);
  return r == Reduction::Mean ? div(total, static_cast<double>(m.numel())) : total;
}

// w as each element's gradient sees it: itself (none), or the one value broadcast (divided by n).
Tensor spread_like(const Tensor& w, const Shape& shape, Reduction r) {
  const Tensor aw = abs(w);
  if (r == Reduction::None) return aw;
  const Tensor each = kernels::expand(aw, shape);
  return r == Reduction::Mean ? div(each, static_cast<double>(shape.numel())) : each;
}

// binary_cross_entropy_with_logits' terms cancel: (1 - t) x + lw softplus(-x), lw = 1 + (pw - 1) t,
// and the gradients dx = w ((1 - t) - lw sigmoid(-x)), dt = w (-x + (pw - 1) softplus(-x)), all
// times the weight. Their magnitudes are the same sums with |terms|; without a pos_weight pw = 1,
// without a weight it is 1. `pos_weight_at` and `weight_at` are the inputs' positions, or -1.
MagnitudeFn logits_magnitudes(Reduction r, int pos_weight_at, int weight_at) {
  return [r, pos_weight_at, weight_at](const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
    const Tensor& x = in[0];
    const Tensor& t = in[1];
    const Tensor pw1 = pos_weight_at >= 0 ? abs(sub(in[static_cast<size_t>(pos_weight_at)], 1.0)) : zeros_like(x);
    const Tensor weight = weight_at >= 0 ? in[static_cast<size_t>(weight_at)] : ones_like(x);
    const Tensor lw = add(mul(pw1, t), 1.0);
    const Tensor sp = unary_op(UnaryOp::softplus, neg(x));
    m[0] = reduce_like(mul(weight, add(mul(abs(rsub(t, 1.0)), abs(x)), mul(lw, sp))), r);
    if (!w.defined()) return m;
    const Tensor each = mul(spread_like(w, x.shape(), r), weight);
    m[1] = mul(each, add(abs(rsub(t, 1.0)), mul(lw, sigmoid(neg(x)))));
    if (m[2].defined()) m[2] = mul(each, add(abs(x), mul(pw1, sp)));
    return m;
  };
}

}  // namespace

std::vector<OpCase> loss_cases() {
  std::vector<OpCase> cases;
  const Shape shape{7, 3};
  const int64_t n = shape.numel();
  for (Reduction r : kReductions) {
    cases.push_back(reduced_case("mse_loss " + shape.str(), {In(shape), In(shape)},
                                 [r](const Inputs& in) { return mse_loss(in[0], in[1], r); }, r, n));
    cases.push_back(reduced_case("l1_loss " + shape.str(), {In(shape), In(shape)},
                                 [r](const Inputs& in) { return l1_loss(in[0], in[1], r); }, r, n));
    // Betas and deltas of 1 and 2: both branches are met (the differences of two normal draws).
    for (double beta : {1.0, 2.0}) {
      const std::string b = " " + std::to_string(beta).substr(0, 3);
      cases.push_back(reduced_case("smooth_l1_loss beta" + b + " " + shape.str(), {In(shape), In(shape)},
                                   [r, beta](const Inputs& in) { return smooth_l1_loss(in[0], in[1], r, beta); }, r,
                                   n));
      cases.push_back(reduced_case("huber_loss delta" + b + " " + shape.str(), {In(shape), In(shape)},
                                   [r, beta](const Inputs& in) { return huber_loss(in[0], in[1], r, beta); }, r, n));
    }
    // smooth_l1 with beta 0 is l1_loss.
    cases.push_back(reduced_case("smooth_l1_loss beta 0 " + shape.str(), {In(shape), In(shape)},
                                 [r](const Inputs& in) { return smooth_l1_loss(in[0], in[1], r, 0.0); }, r, n));
    // binary_cross_entropy: probabilities and targets in [0.05, 0.95], with and without a weight
    // per column; its terms are >= 0. The gradients cancel: dp = w (p - t) / (p (1 - p)) and
    // dt = w (log(1 - p) - log p), so their magnitudes are |w| (p + t) / (p (1 - p)) and
    // |w| (|log(1 - p)| + |log p|) (times the weight).
    for (bool weighted : {false, true}) {
      std::vector<InputSpec> inputs = {In(shape, Values::probability), In(shape, Values::probability)};
      if (weighted) inputs.push_back(Constant({3}, Values::positive));
      cases.push_back(
          reduced_case(std::string("binary_cross_entropy") + (weighted ? " weighted " : " ") + shape.str(), inputs,
                       [r, weighted](const Inputs& in) {
                         return binary_cross_entropy(in[0], in[1], weighted ? in[2] : Tensor(), r);
                       },
                       r, n)
              .magnitudes([r, weighted](const Inputs& in, const Tensor& w, std::vector<Tensor> m) {
                if (!w.defined()) return m;
                const Tensor& p = in[0];
                const Tensor& t = in[1];
                Tensor each = spread_like(w, p.shape(), r);
                if (weighted) each = mul(each, in[2]);
                m[1] = div(mul(each, add(p, t)), mul(p, rsub(p, 1.0)));
                m[2] = mul(each, add(abs(log(rsub(p, 1.0))), abs(log(p))));
                return m;
              }));
    }
    // The logits form: logits from N(0, 1), targets in [0.05, 0.95], a weight and a pos_weight per
    // column (broadcast as PyTorch's [C] pos_weight is).
    for (int extra = 0; extra < 3; ++extra) {  // 0: plain, 1: weight, 2: weight and pos_weight
      std::vector<InputSpec> inputs = {In(shape), In(shape, Values::probability)};
      if (extra == 2) inputs.push_back(Constant({3}, Values::positive));  // pos_weight
      if (extra >= 1) inputs.push_back(Constant({3}, Values::positive));  // weight
      const std::string what = extra == 0 ? " " : extra == 1 ? " weighted " : " weighted, pos_weight ";
      OpCase c = reduced_case("binary_cross_entropy_with_logits" + what + shape.str(), inputs,
                              [r, extra](const Inputs& in) {
                                const Tensor pos_weight = extra == 2 ? in[2] : Tensor();
                                const Tensor weight = extra == 2 ? in[3] : extra == 1 ? in[2] : Tensor();
                                return binary_cross_entropy_with_logits(in[0], in[1], weight, pos_weight, r);
                              },
                              r, n);
      c.magnitudes(logits_magnitudes(r, extra == 2 ? 2 : -1, extra == 2 ? 3 : extra == 1 ? 2 : -1));
      cases.push_back(c.computed(12));  // the pos_weight form composes five ops, each rounding
    }
    // nll_loss and cross_entropy with class weights (and cross_entropy's unfused reductions): the
    // terms are -w[y] log_probs[i, y]; the mean divides their sum by sum w[y].
    const Shape logits{8, 5};
    cases.push_back(OpCase("loss", std::string("nll_loss weighted reduction ") + reduction_name(r),
                           {In(logits), Labels({8}, 5), Constant({5}, Values::positive)},
                           [r](const Inputs& in) { return nll_loss(in[0], in[1], in[2], r); })
                        .sums(8)
                        .computed(10)
                        .abs_magnitude());
    cases.push_back(OpCase("loss", std::string("cross_entropy weighted reduction ") + reduction_name(r),
                           {In(logits), Labels({8}, 5), Constant({5}, Values::positive)},
                           [r](const Inputs& in) { return cross_entropy(in[0], in[1], in[2], r); })
                        .sums(8)
                        .computed(12));
    cases.push_back(OpCase("loss", std::string("cross_entropy reduction ") + reduction_name(r),
                           {In(logits), Labels({8}, 5)},
                           [r](const Inputs& in) { return cross_entropy(in[0], in[1], r); })
                        .sums(8)
                        .computed(12));
  }
  return cases;
}

}  // namespace ember::test
