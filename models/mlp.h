#pragma once
// nn::MLP: Linear-ReLU-...-Linear, a Sequential (so checkpoint_sequential can
// split it). Parameters are "0.weight", "0.bias", "2.weight", ...
//
//   auto mlp = std::make_shared<ember::nn::MLP>(2, std::vector<int64_t>{64, 64}, 3);      // 2 -> 64 -> 64 -> 3
//   auto img = std::make_shared<ember::nn::MLP>(ember::Shape{1, 28, 28}, std::vector<int64_t>{128}, 10);
//   // an image input shape puts a Flatten first: [N, 1, 28, 28] -> [N, 784]
#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "models/sequential.h"

namespace ember::nn {

class MLP : public Sequential {
 public:
  MLP(int64_t in_features, const std::vector<int64_t>& hidden, int64_t out_features);
  // input_shape excludes the batch dim; more than one dim adds a leading Flatten.
  MLP(const Shape& input_shape, const std::vector<int64_t>& hidden, int64_t out_features);
  const char* name() const override { return "MLP"; }

 private:
  void build(int64_t in_features, const std::vector<int64_t>& hidden, int64_t out_features);
};

}  // namespace ember::nn
