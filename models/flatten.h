#pragma once
// nn::Flatten: [N, d1, d2, ...] -> [N, d1 * d2 * ...], a view (no copy).
//
//   net->push_back(std::make_shared<ember::nn::Flatten>());   // before the first Linear of an image model
#include <cstdint>
#include "models/module.h"

namespace ember::nn {

class Flatten : public Module {
 public:
  // Merges dims start_dim..end_dim (negative counts from the end), like torch.nn.Flatten.
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : start_dim_(start_dim), end_dim_(end_dim) {}
  const char* name() const override { return "Flatten"; }

 protected:
  Tensor forward_impl(const Tensor& x) override { return x.flatten(start_dim_, end_dim_); }

 private:
  int64_t start_dim_, end_dim_;
};

}  // namespace ember::nn
