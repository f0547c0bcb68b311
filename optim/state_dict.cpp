#include "optim/state_dict.h"

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "kernels/factories.h"

namespace ember::optim {

Tensor state_scalar(double value) { return full(Shape{1}, value, TensorOptions(DType::f64)); }

Tensor state_count(int64_t value) {
  return from_vector(std::vector<int64_t>{value}, Shape{1}, TensorOptions(DType::i64));
}

void append_part(NamedTensors& state, const std::string& prefix, const NamedTensors& part) {
  for (const auto& [name, tensor] : part) state.emplace_back(prefix + name, tensor);
}

StateDictReader::StateDictReader(const TensorMap& state, std::string owner)
    : state_(state), owner_(std::move(owner)) {}

const Tensor* StateDictReader::find(const std::string& name, int64_t numel) {
  auto it = state_.find(name);
  if (it == state_.end()) return nullptr;
  EMBER_CHECK(numel < 0 || it->second.numel() == numel,
              owner_ << " state: entry '" << name << "' has shape " << it->second.shape() << ", expected "
                     << numel << " element(s)");
  taken_.insert(name);
  return &it->second;
}

Tensor StateDictReader::tensor(const std::string& name, const Tensor& like) {
  const Tensor* entry = find(name, -1);
  if (entry == nullptr) return Tensor();
  EMBER_CHECK(entry->shape() == like.shape(), owner_ << " state: entry '" << name << "' has shape "
                                                     << entry->shape() << " but its parameter's is " << like.shape());
  NoGradGuard no_grad;
  return entry->to(like.device(), like.dtype()).clone();
}

double StateDictReader::scalar(const std::string& name, double fallback) {
  const Tensor* entry = find(name, 1);
  return entry == nullptr ? fallback : entry->to(kCPU, DType::f64).item<double>();
}

int64_t StateDictReader::count(const std::string& name, int64_t fallback) {
  const Tensor* entry = find(name, 1);
  return entry == nullptr ? fallback : entry->to(kCPU, DType::i64).item<int64_t>();
}

TensorMap StateDictReader::part(const std::string& prefix) {
  TensorMap part;
  for (auto it = state_.lower_bound(prefix); it != state_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it) {
    part.emplace(it->first.substr(prefix.size()), it->second);
    taken_.insert(it->first);
  }
  return part;
}

void StateDictReader::finish() const {
  for (const auto& [name, tensor] : state_)
    EMBER_CHECK(taken_.count(name), owner_ << " state: unexpected entry '" << name << "' (shape " << tensor.shape()
                                           << "): the state was saved by another optimizer or for other parameters");
}

}  // namespace ember::optim
