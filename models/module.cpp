#include "models/module.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>
#include <typeindex>
#include <unordered_map>

#include "autograd/grad_mode.h"
#include "autograd/recompute_state.h"
#include "core/error.h"
#include "kernels/ops.h"
#include "memory/scopes.h"
#include "memory/allocation_observer.h"
#include "memory/empty.h"
#include "autograd/accumulate_grad.h"

namespace ember::nn {

namespace {

// A copy of t's data on `device` with `dtype` (one allocation, one copy kernel).
Tensor converted_copy(const Tensor& t, Device device, DType dtype, MemoryCategory category) {
  CategoryScope scope(category);
  Tensor out = empty(t.shape(), TensorOptions().dtype(dtype).device(device));
  kernels::copy_(out, t.detach());
  return out;
}

// Points t's TensorImpl at new bytes so every handle to t sees them.
// Integer tensors keep their dtype.
void replace_data(const Tensor& t, Device device, std::optional<DType> dtype, MemoryCategory category) {
  const DType target = dtype && is_floating(t.dtype()) ? *dtype : t.dtype();
  if (t.device() == device && t.dtype() == target) return;
  const Tensor fresh = converted_copy(t, device, target, category);
  if (Tensor g = t.grad(); g.defined()) t.set_grad(converted_copy(g, device, target, MemoryCategory::gradient));
  TensorImpl& impl = *t.impl();
  impl.storage = fresh.storage();
  impl.offset_bytes = fresh.impl()->offset_bytes;
  impl.dtype = target;
  impl.device = device;
}

// "ember::models::TwoLayer" -> "TwoLayer"; a template's arguments keep their namespaces.
std::string unqualified(std::string type_name) {
  const size_t end = type_name.find('<');
  const size_t colons = type_name.rfind("::", end);
  return colons == std::string::npos ? type_name : type_name.substr(colons + 2);
}

// The demangled name of a dynamic type, computed once per type. The map's nodes never move, so
// the returned pointer stays valid.
const char* type_name_of(const std::type_info& type) {
  static std::mutex mutex;
  static std::unordered_map<std::type_index, std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = names.try_emplace(std::type_index(type));
  if (inserted) {
    int status = 0;
    char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
    it->second = unqualified(status == 0 && demangled ? demangled : type.name());
    std::free(demangled);
  }
  return it->second.c_str();
}

}  // namespace

const char* Module::name() const { return type_name_of(typeid(*this)); }

Tensor Module::forward_impl(const Tensor& x) {
  if (own_forward_ != nullptr) return own_forward_(*this, x);
  EMBER_THROW(name() << ": forward is not implemented (override forward_impl to run this module). A forward of "
                        "its own, as in libtorch, runs when the module is called directly, inside nn::Sequential and "
                        "as a child given to register_module, but not through a std::shared_ptr<nn::Module> made "
                        "elsewhere (train::Trainer, fit and evaluate hold the model so)");
}

Tensor Module::forward_scope(const std::function<Tensor()>& fn) {
  CategoryScope scope(MemoryCategory::activation);
  // A checkpointed segment recomputed during backward stays in the backward phase.
  std::optional<PhaseScope> phase;
  if (!autograd::is_recomputing()) phase.emplace(Phase::forward);
  return fn();
}

Tensor Module::forward(const Tensor& x) {
  return forward_scope([&] { return forward_impl(x); });
}

void Module::check_new_name(const std::string& name) const {
  EMBER_CHECK(!name.empty() && name.find('.') == std::string::npos,
              this->name() << ": invalid member name '" << name << "' (must be non-empty, without '.')");
  auto taken = [&](const auto& list) {
    for (const auto& entry : list)
      if (entry.first == name) return true;
    return false;
  };
  EMBER_CHECK(!taken(parameters_) && !taken(buffers_) && !taken(children_),
              this->name() << ": a member named '" << name << "' is already registered");
}

Tensor Module::register_parameter(const std::string& name, Tensor tensor) {
  check_new_name(name);
  EMBER_CHECK(tensor.defined(), this->name() << ": parameter '" << name << "' is undefined");
  EMBER_CHECK(tensor.is_leaf(), this->name() << ": parameter '" << name << "' must be a leaf tensor");
  tensor.requires_grad_(true);
  parameters_.emplace_back(name, tensor);
  return tensor;
}

Tensor Module::register_buffer(const std::string& name, Tensor tensor) {
  check_new_name(name);
  EMBER_CHECK(tensor.defined(), this->name() << ": buffer '" << name << "' is undefined");
  buffers_.emplace_back(name, tensor);
  return tensor;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name);
  EMBER_CHECK(module != nullptr, this->name() << ": submodule '" << name << "' is null");
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, bool params,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, t] : params ? parameters_ : buffers_) out.emplace_back(prefix + name, t);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", params, out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", true, out);
  return out;
}

NamedTensors Module::state_dict() const {
  NamedTensors all = named_parameters();
  for (auto& b : named_buffers()) all.push_back(std::move(b));
  return all;
}

void Module::load_state_dict(const TensorMap& state, const std::string& source) {
  NoGradGuard no_grad;
  const NamedTensors own = state_dict();
  for (const auto& [name, tensor] : own) {
    auto it = state.find(name);
    EMBER_CHECK(it != state.end(), "load_state_dict: " << source << " has no tensor '" << name << "' (the model's is "
                                                       << tensor.shape() << ")");
    EMBER_CHECK(it->second.shape() == tensor.shape(), "load_state_dict: tensor '" << name << "' has shape "
                                                          << it->second.shape() << " in " << source
                                                          << " but the model's is " << tensor.shape());
  }
  for (const auto& entry : state) {  // not a structured binding: clang 14 cannot capture one in the lambda
    const bool known = std::any_of(own.begin(), own.end(), [&](const auto& o) { return o.first == entry.first; });
    EMBER_CHECK(known, "load_state_dict: " << source << " has tensor '" << entry.first << "' (shape "
                                           << entry.second.shape() << ") that the model lacks");
  }
  for (auto [name, tensor] : own) tensor.copy_(state.at(name));  // a handle: copies into the module's tensor
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", false, out);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& entry : named_parameters()) out.push_back(std::move(entry.second));
  return out;
}

std::vector<Tensor> Module::buffers() const {
  std::vector<Tensor> out;
  for (auto& entry : named_buffers()) out.push_back(std::move(entry.second));
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& entry : children_) out.push_back(entry.second);
  return out;
}

void Module::collect_modules(const std::string& prefix,
                             std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out) {
  for (const auto& [child_name, child] : children_) {
    const std::string name = prefix.empty() ? child_name : prefix + "." + child_name;
    out.emplace_back(name, child);
    child->collect_modules(name, out);
  }
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  std::shared_ptr<Module> self = weak_from_this().lock();
  EMBER_CHECK(self != nullptr, name() << ".named_modules: the module must be owned by a std::shared_ptr "
                                         "(create it with std::make_shared)");
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out{{"", std::move(self)}};
  collect_modules("", out);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules() {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& entry : named_modules()) out.push_back(std::move(entry.second));
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (const auto& entry : children_) entry.second->apply(fn);
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& entry : children_) entry.second->train(on);
}

void Module::convert(std::optional<Device> device, std::optional<DType> dtype, bool buffers) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters())
    replace_data(p, device.value_or(p.device()), dtype, MemoryCategory::parameter);
  if (!buffers) return;
  // Buffers are model state, not activations: counted with the parameters.
  for (const Tensor& b : this->buffers()) replace_data(b, device.value_or(b.device()), dtype, MemoryCategory::parameter);
}

void Module::to(Device device) { convert(device, std::nullopt); }

void Module::to(DType dtype) {
  EMBER_CHECK(is_floating(dtype), name() << ".to: expected a floating dtype, got " << dtype_name(dtype));
  convert(std::nullopt, dtype);
}

void Module::to(Device device, DType dtype) {
  EMBER_CHECK(is_floating(dtype), name() << ".to: expected a floating dtype, got " << dtype_name(dtype));
  convert(device, dtype);
}

void Module::parameters_to(DType dtype) {
  EMBER_CHECK(is_floating(dtype), name() << ".parameters_to: expected a floating dtype, got " << dtype_name(dtype));
  convert(std::nullopt, dtype, /*buffers=*/false);
}

void Module::zero_grad(bool set_to_none) { autograd::zero_grad(parameters(), set_to_none); }

void Module::print(std::ostream& os, const std::string& label, int depth) const {
  const std::string indent(static_cast<size_t>(depth) * 2, ' ');
  os << indent << label << name() << "(" << extra_str();
  if (children_.empty()) {
    os << ")";
    return;
  }
  os << "\n";
  for (const auto& [child_name, child] : children_) {
    child->print(os, "(" + child_name + "): ", depth + 1);
    os << "\n";
  }
  os << indent << ")";
}

std::string Module::str() const {
  std::ostringstream os;
  print(os, "", 0);
  return os.str();
}

}  // namespace ember::nn
