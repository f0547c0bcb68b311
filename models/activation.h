#pragma once
// Activation layers without parameters, for Sequential models:
//
//   auto net = std::make_shared<ember::nn::Sequential>();
//   net->push_back(std::make_shared<ember::nn::Linear>(2, 64));
//   net->push_back(std::make_shared<ember::nn::ReLU>());
//   net->push_back(std::make_shared<ember::nn::SiLU>());   // also Sigmoid, Tanh, GELU (the exact erf form)
#include "models/module.h"

namespace ember::nn {

class ReLU : public Module {
 public:
  const char* name() const override { return "ReLU"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
};

class Sigmoid : public Module {
 public:
  const char* name() const override { return "Sigmoid"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
};

class Tanh : public Module {
 public:
  const char* name() const override { return "Tanh"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
};

class GELU : public Module {
 public:
  const char* name() const override { return "GELU"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
};

class SiLU : public Module {
 public:
  const char* name() const override { return "SiLU"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;
};

}  // namespace ember::nn
