#pragma once
// Anomaly detection: while it is on, every op recorded in the graph checks that its
// output is finite, and backward checks every gradient a node returns; the first
// inf or NaN throws an ember::Error naming the op, the pass and the element.
//
//   {
//     ember::DetectAnomalyGuard anomaly;   // as torch.autograd.detect_anomaly()
//     Tensor loss = cross_entropy(model->forward(x), y);
//     loss.backward();                     // "detect anomaly: the forward output of conv2d ... is nan at [3, 0, 5, 1]"
//   }
//
// Each check copies the tensor to the host: a debugging aid, many times slower.
// Process-wide (the engine may run on any thread), like PyTorch's switch.
#include <vector>

#include "autograd/node.h"
#include "core/tensor.h"

namespace ember {

struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : previous_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
  ~DetectAnomalyGuard() { AnomalyMode::set_enabled(previous_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

namespace autograd {
// The checks record() and the engine make while anomaly mode is on.
void check_forward_output(const Tensor& output, const Node& node);
void check_backward_gradients(const std::vector<Tensor>& gradients, const Node& node);
}  // namespace autograd

}  // namespace ember
