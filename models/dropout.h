#pragma once
// nn::Dropout: zeroes each element with probability p during training and scales
// the rest by 1 / (1 - p); the identity in eval mode.
//
//   net->push_back(std::make_shared<ember::nn::Dropout>(0.5));
//   model->eval();   // dropout off
//
// The mask comes from the global Philox generator (ember::manual_seed) and is
// redrawn, not stored, for backward (kernels/dropout_math.h).
#include "models/module.h"

namespace ember::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  const char* name() const override { return "Dropout"; }
  double p() const { return p_; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
  std::string extra_str() const override;

 private:
  double p_;
};

}  // namespace ember::nn
