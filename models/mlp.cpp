#include "models/mlp.h"

#include <memory>

#include "core/error.h"
#include "models/activation.h"
#include "models/flatten.h"
#include "models/linear.h"

namespace ember::nn {

MLP::MLP(int64_t in_features, const std::vector<int64_t>& hidden, int64_t out_features) {
  build(in_features, hidden, out_features);
}

MLP::MLP(const Shape& input_shape, const std::vector<int64_t>& hidden, int64_t out_features) {
  EMBER_CHECK(input_shape.dim() >= 1, "MLP: input shape must have at least one dim, got " << input_shape);
  if (input_shape.dim() > 1) push_back(std::make_shared<Flatten>());
  build(input_shape.numel(), hidden, out_features);
}

void MLP::build(int64_t in_features, const std::vector<int64_t>& hidden, int64_t out_features) {
  int64_t width = in_features;
  for (int64_t h : hidden) {
    push_back(std::make_shared<Linear>(width, h));
    push_back(std::make_shared<ReLU>());
    width = h;
  }
  push_back(std::make_shared<Linear>(width, out_features));
}

}  // namespace ember::nn
