#pragma once
// nn::Sequential: runs its children in order. Children are named "0", "1", ...
// so parameters are "0.weight", "0.bias", "2.weight" (as in PyTorch).
//
//   auto net = std::make_shared<ember::nn::Sequential>(nn::Linear(2, 64), nn::ReLU(), nn::Linear(64, 3));
//   auto fc = std::make_shared<ember::nn::Linear>(64, 3);
//   auto net2 = std::make_shared<ember::nn::Sequential>(nn::Linear(2, 64), nn::ReLU(), fc);  // shares fc
//   Tensor h = net->forward_range(x, 0, 2);   // the first two layers only (checkpoint segments)
//
// A BatchNorm2d followed by a ReLU runs as one fused op (BatchNorm2d::forward_relu: the same
// values bit for bit, one pass over the activation fewer forward and backward), when both lie
// in the range run.
// Each argument is a std::shared_ptr to a module, which Sequential then shares, or a module
// value, a temporary or std::move'd, which it moves into a new shared module. A module class that
// declares its own forward, as libtorch's do, runs it (models/module.h); layers given in braces as
// std::shared_ptr<nn::Module> hide their class, so only forward_impl reaches them. libtorch's
// torch::nn::Linear is a holder (a shared_ptr to a LinearImpl), so there a named layer passed by
// value stays shared; here a named layer is shared by passing its shared_ptr, and passing one
// by value without std::move does not compile (Module is not copyable).
//
// C++ leaves the order in which a call's arguments are built unspecified, so layers given as
// temporaries draw their initial weights in the compiler's order (GCC builds the last first).
// For the same weights on every compiler, build them in braces, which run left to right
// (nn::Sequential{nn::Linear(2, 64), ...}), or push_back them in turn.
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "models/module.h"

namespace ember::nn {

class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  template <class First, class... Rest,
            class = std::enable_if_t<!std::is_same_v<std::decay_t<First>, Sequential> ||
                                     sizeof...(Rest) != 0>>
  explicit Sequential(First&& first, Rest&&... rest) {
    push_back(std::forward<First>(first));
    (push_back(std::forward<Rest>(rest)), ...);
  }
  const char* name() const override { return "Sequential"; }

  void push_back(std::shared_ptr<Module> module);
  // A shared module of a known class: one that declares its own forward (libtorch's habit) runs it.
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, M> && !std::is_same_v<M, Module>>>
  void push_back(std::shared_ptr<M> module) {
    if (module) adopt_forward(*module);
    push_back(std::shared_ptr<Module>(std::move(module)));
  }
  // Moves a module value into a new shared module: push_back(nn::Linear(2, 64)).
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>>
  void push_back(M&& module) {
    static_assert(!std::is_lvalue_reference_v<M>,
                  "Sequential takes a module by value only as a temporary or std::move(module); "
                  "pass a std::shared_ptr to share a named one");
    push_back(std::make_shared<std::decay_t<M>>(std::move(module)));
  }
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
