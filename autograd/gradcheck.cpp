#include "autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "kernels/factories.h"

namespace ember {

namespace {

// A fixed weighting w for sum(output * w), so every output element contributes
// with a different coefficient.
Tensor output_weights(const Tensor& out) {
  std::vector<double> w(static_cast<size_t>(out.numel()));
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5 + 0.37 * static_cast<double>((i * 7919) % 13) / 13.0;
  return from_vector<double>(w, out.shape()).to(out.device());
}

double weighted_output(const GradcheckFn& fn, const std::vector<Tensor>& inputs, const Tensor& weights) {
  return sum(mul(fn(inputs).to(DType::f64), weights)).item<double>();
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& raw_inputs, GradcheckOptions options) {
  std::vector<Tensor> inputs;
  for (const Tensor& t : raw_inputs) {
    Tensor x = is_floating(t.dtype()) ? t.detach().to(DType::f64).clone() : t;
    if (is_floating(t.dtype())) x.requires_grad_();
    inputs.push_back(x);
  }

  Tensor out = fn(inputs);
  EMBER_CHECK(is_floating(out.dtype()), "gradcheck: the function must return a floating tensor");
  const Tensor weights = output_weights(out);
  sum(mul(out.to(DType::f64), weights)).backward();

  GradcheckResult result;
  std::ostringstream report;
  NoGradGuard no_grad;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor& x = inputs[k];
    if (!x.requires_grad()) continue;
    const std::vector<double> analytic =
        x.grad().defined() ? x.grad().to_vector<double>() : std::vector<double>(static_cast<size_t>(x.numel()), 0.0);
    std::vector<double> values = x.to_vector<double>();
    double worst_excess = 0.0;
    int64_t worst = -1;
    double worst_numeric = 0.0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double original = values[static_cast<size_t>(i)];
      auto evaluate_at = [&](double v) {
        values[static_cast<size_t>(i)] = v;
        x.copy_(from_vector<double>(values, x.shape()));
        return weighted_output(fn, inputs, weights);
      };
      const double plus = evaluate_at(original + options.eps);
      const double minus = evaluate_at(original - options.eps);
      evaluate_at(original);
      const double numeric = (plus - minus) / (2 * options.eps);
      const double a = analytic[static_cast<size_t>(i)];
      const double excess = std::fabs(a - numeric) - (options.atol + options.rtol * std::fabs(numeric));
      if (!(excess <= worst_excess)) {  // also catches NaN
        worst_excess = std::isnan(excess) ? INFINITY : excess;
        worst = i;
        worst_numeric = numeric;
      }
    }
    if (worst >= 0) {
      result.ok = false;
      report << "input " << k << " " << x.shape() << ": worst at flat index " << worst << ", analytic "
             << analytic[static_cast<size_t>(worst)] << " vs numeric " << worst_numeric << " (atol " << options.atol
             << ", rtol " << options.rtol << ")\n";
    }
  }
  result.message = report.str();
  return result;
}

}  // namespace ember
