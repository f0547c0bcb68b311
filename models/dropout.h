#pragma once
// nn::Dropout: zeroes each element with probability p during training and scales
// the rest by 1 / (1 - p); the identity in eval mode. nn::Dropout2d does it per channel
// (PyTorch's Dropout2d): a whole plane x[n, c] is zeroed or kept, for [N, C, H, W] inputs (or
// one image [C, H, W]).
//
//   net->push_back(std::make_shared<ember::nn::Dropout>(0.5));
//   auto conv2_drop = std::make_shared<ember::nn::Dropout2d>();   // p = 0.5
//   model->eval();   // dropout off
//
// The mask comes from the global Philox generator (ember::manual_seed) and is
// redrawn, not stored, for backward (kernels/dropout_math.h).
#include "models/module.h"

namespace ember::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5) : Dropout(p, "Dropout") {}
  const char* name() const override { return "Dropout"; }
  double p() const { return p_; }

 protected:
  Dropout(double p, const char* layer);  // `layer` names the class in the error for a bad p
  Tensor forward_impl(const Tensor& x) override;
  std::string extra_str() const override;

 private:
  double p_;
};

class Dropout2d : public Dropout {
 public:
  explicit Dropout2d(double p = 0.5) : Dropout(p, "Dropout2d") {}
  const char* name() const override { return "Dropout2d"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
};

}  // namespace ember::nn
