#pragma once
// nn::Sequential: runs its children in order. Children are named "0", "1", ...
// so parameters are "0.weight", "0.bias", "2.weight" (as in PyTorch).
//
//   auto net = std::make_shared<ember::nn::Sequential>(std::initializer_list<std::shared_ptr<ember::nn::Module>>{
//       std::make_shared<ember::nn::Linear>(2, 64), std::make_shared<ember::nn::ReLU>(),
//       std::make_shared<ember::nn::Linear>(64, 3)});
//   Tensor h = net->forward_range(x, 0, 2);   // the first two layers only (checkpoint segments)
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <vector>

#include "models/module.h"

namespace ember::nn {

class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  const char* name() const override { return "Sequential"; }

  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return layers_.size(); }
  const std::shared_ptr<Module>& operator[](size_t index) const;

  // Runs layers [begin, end) on x; allocations are tagged as activations, like forward().
  Tensor forward_range(const Tensor& x, size_t begin, size_t end);

 protected:
  Tensor forward_impl(const Tensor& x) override;

 private:
  std::vector<std::shared_ptr<Module>> layers_;  // the same modules as the children, by index
};

}  // namespace ember::nn
