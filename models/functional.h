#pragma once
// nn::Functional: a module around a function of one tensor, for the ops that have no layer
// (or a lambda), as libtorch's torch::nn::Functional.
//
//   auto net = std::make_shared<nn::Sequential>(nn::Linear(2, 64), nn::Functional(ember::relu),
//                                               nn::Functional([](const Tensor& x) { return x * 2.0; }));
//
// It has no parameters; str() shows "Functional()", or the name given.
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "models/module.h"

namespace ember::nn {

class Functional : public Module {
 public:
  using Function = std::function<Tensor(const Tensor&)>;
  // Any callable; a template so that an overloaded function (ember::relu) picks the
  // (const Tensor&) overload below instead of being ambiguous.
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Functional>>>
  explicit Functional(F fn, std::string name = "Functional") : fn_(std::move(fn)), name_(std::move(name)) {}
  explicit Functional(Tensor (*fn)(const Tensor&), std::string name = "Functional")
      : fn_(fn), name_(std::move(name)) {}
  const char* name() const override { return name_.c_str(); }

 protected:
  Tensor forward_impl(const Tensor& x) override { return fn_(x); }

 private:
  Function fn_;
  std::string name_;
};

}  // namespace ember::nn
