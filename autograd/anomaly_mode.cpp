#include "autograd/anomaly_mode.h"

#include <atomic>
#include <cmath>
#include <string>

#include "autograd/grad_mode.h"
#include "core/error.h"

namespace ember {

namespace {

std::atomic<bool> anomaly_enabled{false};

std::string element_at(const Tensor& t, int64_t flat) {
  std::vector<int64_t> index(static_cast<size_t>(t.dim()));
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    index[static_cast<size_t>(d)] = flat % t.size(d);
    flat /= t.size(d);
  }
  std::string s = "[";
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

void check(const Tensor& t, const autograd::Node& node, const std::string& what) {
  if (!is_floating(t.dtype()) || t.numel() == 0) return;
  NoGradGuard no_grad;
  const Tensor host = t.to(kCPU, DType::f64);
  const double* values = host.data<double>();
  int64_t bad = 0;
  while (bad < host.numel() && std::isfinite(values[bad])) ++bad;
  if (bad == host.numel()) return;
  const double value = values[bad];
  EMBER_THROW("detect anomaly: " << what << " of " << node.name() << " " << t.shape() << " is "
                                 << (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf") << " at "
                                 << element_at(t, bad) << " (the first op whose result is not finite)");
}

}  // namespace

bool AnomalyMode::is_enabled() { return anomaly_enabled.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled) { anomaly_enabled.store(enabled, std::memory_order_relaxed); }

namespace autograd {

void check_forward_output(const Tensor& output, const Node& node) { check(output, node, "the forward output"); }

void check_backward_gradients(const std::vector<Tensor>& gradients, const Node& node) {
  for (size_t i = 0; i < gradients.size(); ++i)
    if (gradients[i].defined()) check(gradients[i], node, "the gradient for input " + std::to_string(i) + " in backward");
}

}  // namespace autograd
}  // namespace ember
