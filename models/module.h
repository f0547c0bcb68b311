#pragma once
// nn::Module: a tree of layers that owns parameters (trained tensors) and
// buffers (state that is not trained, e.g. BatchNorm running statistics).
//
//   class TwoLayer : public ember::nn::Module {
//    public:
//     TwoLayer() {
//       fc1_ = register_module("fc1", std::make_shared<Linear>(784, 128));
//       fc2_ = register_module("fc2", std::make_shared<Linear>(128, 10));
//     }
//    protected:
//     Tensor forward_impl(const Tensor& x) override { return fc2_->forward(relu(fc1_->forward(x))); }
//    private:
//     std::shared_ptr<Linear> fc1_, fc2_;
//   };
//   model->named_parameters();   // {"fc1.weight", ...}, registration order, children after own
//   model->named_modules();      // {"", model}, {"fc1", fc1}, {"fc2", fc2}: dotted names, root ""
//   model->apply([](nn::Module& m) { ... });   // every module, the root first
//
// name() defaults to the class's own name ("TwoLayer"), found at run time; forward_impl()
// defaults to an error, so a module that only holds others needs neither.
//
// libtorch's habit works too: a module that declares a forward of its own instead
//   struct Net : ember::nn::Module { ember::Tensor forward(ember::Tensor x) { ... } };
// runs it when called directly (net->forward(x): C++ finds Net's), and ember finds it wherever it
// learns the class at compile time: nn::Sequential's push_back and constructor, and
// register_module (Module::forward then runs it, with the activation category). Through a
// std::shared_ptr<nn::Module> made elsewhere (train::Trainer, train::fit, train::evaluate hold
// the model that way) the class is unknown: there such a module throws, saying to override
// forward_impl, as every module that ember runs through its base may.
//
// A module may be moved into a new object (Sequential takes layers by value that way): the
// tensors and children move with it. Copying is deleted.
//
// forward() is public and non-virtual: it tags the bytes it allocates as
// activations and calls the virtual forward_impl() (STYLE.md rule 6). Layers
// create their parameters under CategoryScope(MemoryCategory::parameter).
//
// to(device) / to(dtype) convert in place: every registered tensor keeps its
// TensorImpl, whose storage, dtype and device are replaced. Handles held
// elsewhere (an optimizer's parameter list, a layer's weight_ member) stay valid
// and see the new data; views taken before the move keep the old storage.
// Gradients are converted with their parameter.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/named_tensors.h"
#include "core/tensor.h"

namespace ember::nn {

class Module;

namespace detail {
// Whether M declares a forward of its own (libtorch's habit) rather than only inheriting
// Module::forward. An overloaded or inaccessible forward counts as none.
template <class M, class = void>
struct declares_forward : std::false_type {};
template <class M>
struct declares_forward<M, std::void_t<decltype(&M::forward)>>
    : std::bool_constant<!std::is_same_v<decltype(&M::forward), Tensor (Module::*)(const Tensor&)>> {};
}  // namespace detail

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) = default;
  Module& operator=(Module&&) = delete;

  // The layer's type name for messages and printing ("Linear"); by default the dynamic
  // class's name without its namespaces.
  virtual const char* name() const;
  // Runs the module: category activation, then forward_impl().
  Tensor forward(const Tensor& x);
  Tensor operator()(const Tensor& x) { return forward(x); }

  // Parameters and buffers of this module and all descendants, depth first
  // (own tensors first, then each child in registration order). Names are dotted
  // paths: "0.weight", "layer1.conv.bias".
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> buffers() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  std::vector<std::shared_ptr<Module>> children() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }
  // This module ("") and every descendant, depth first in registration order, with dotted names
  // ("layer1", "layer1.conv"). Needs the module to be owned by a std::shared_ptr (throws if not).
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();
  std::vector<std::shared_ptr<Module>> modules();
  // Calls fn on this module, then on every descendant in named_modules() order.
  void apply(const std::function<void(Module&)>& fn);
  int64_t num_parameters() const;  // total elements

  // Every parameter, then every buffer, by name: what a weights file holds.
  NamedTensors state_dict() const;
  // Copies each tensor of `state` into the parameter or buffer of that name (converted to its
  // device and dtype). A missing tensor, a shape mismatch or a tensor the module lacks throws,
  // naming `source` (e.g. the file), the tensor and both shapes.
  void load_state_dict(const TensorMap& state, const std::string& source = "state_dict");

  // Training mode (dropout, batch statistics): set recursively.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // In-place conversion of every parameter and buffer (see the header comment).
  // to(dtype) converts floating tensors only; integer buffers keep their dtype.
  void to(Device device);
  void to(DType dtype);
  void to(Device device, DType dtype);
  // Converts the parameters (and their gradients) only; buffers keep their dtype. Mixed precision
  // uses it: f16 weights, while BatchNorm's running statistics stay fp32.
  void parameters_to(DType dtype);

  void zero_grad(bool set_to_none = true);

  // One line per module, indented by depth: "Sequential(\n  (0): Linear(in=2, out=64)\n ...)".
  std::string str() const;

 protected:
  // Runs fn as forward() runs forward_impl: its bytes are activations, its phase forward (unless
  // a checkpointed segment is being recomputed). For a layer's other entry points
  // (BatchNorm2d::forward_relu).
  Tensor forward_scope(const std::function<Tensor()>& fn);
  // Registers a tensor as a parameter; it is marked requires_grad. Returns it.
  Tensor register_parameter(const std::string& name, Tensor tensor);
  Tensor register_buffer(const std::string& name, Tensor tensor);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    if (module) adopt_forward(*module);
    add_child(name, module);
    return module;
  }
  // Lets Module::forward run M's own forward, when M declares one (see the header comment).
  template <class M>
  static void adopt_forward(M& module) {
    if constexpr (detail::declares_forward<M>::value)
      module.own_forward_ = [](Module& m, const Tensor& x) -> Tensor { return static_cast<M&>(m).forward(x); };
  }

  // Runs the forward adopt_forward found, else throws: a module that is run overrides it.
  virtual Tensor forward_impl(const Tensor& x);
  // Shown inside the parentheses by str(), e.g. "in=2, out=64".
  virtual std::string extra_str() const { return ""; }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name) const;
  void convert(std::optional<Device> device, std::optional<DType> dtype, bool buffers = true);
  void collect(const std::string& prefix, bool params, std::vector<std::pair<std::string, Tensor>>& out) const;
  void print(std::ostream& os, const std::string& label, int depth) const;
  void collect_modules(const std::string& prefix, std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out);

  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  Tensor (*own_forward_)(Module&, const Tensor&) = nullptr;  // the subclass's own forward (adopt_forward)
};

}  // namespace ember::nn
