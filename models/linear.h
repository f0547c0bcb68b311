#pragma once
// nn::Linear: y = x W^T + b, with PyTorch's layout and default initialisation.
//
//   auto fc = std::make_shared<ember::nn::Linear>(ember::nn::LinearOptions(784, 128).bias(false));
//   ember::Tensor y = fc->forward(x);   // x [N, 784] (or [..., 784]) -> y [N, 128]
//
// Init (PyTorch's kaiming_uniform_ with a = sqrt(5)): weight and bias are both
// U(-1/sqrt(in), 1/sqrt(in)), drawn from the global generator (ember::manual_seed).
#include <cstdint>

#include "models/module.h"

namespace ember::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_(in_features), out_(out_features) {}
  LinearOptions& bias(bool on) { bias_ = on; return *this; }
  int64_t in_;
  int64_t out_;
  bool bias_ = true;
};

class Linear : public Module {
 public:
  explicit Linear(const LinearOptions& options);
  Linear(int64_t in_features, int64_t out_features) : Linear(LinearOptions(in_features, out_features)) {}
  const char* name() const override { return "Linear"; }

  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // undefined without bias
  int64_t in_features() const { return options_.in_; }
  int64_t out_features() const { return options_.out_; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
  std::string extra_str() const override;

 private:
  LinearOptions options_;
  Tensor weight_;  // [out, in]
  Tensor bias_;    // [out]
};

}  // namespace ember::nn
