#include "models/sequential.h"

#include <string>
#include <typeinfo>

#include "core/error.h"
#include "models/activation.h"
#include "models/batch_norm.h"
#include "memory/scopes.h"

namespace ember::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& m : modules) push_back(m);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  layers_.push_back(register_module(std::to_string(layers_.size()), std::move(module)));
}

const std::shared_ptr<Module>& Sequential::operator[](size_t index) const {
  EMBER_CHECK(index < layers_.size(), name() << ": index " << index << " out of range for " << layers_.size()
                                             << " layers");
  return layers_[index];
}

Tensor Sequential::forward_range(const Tensor& x, size_t begin, size_t end) {
  EMBER_CHECK(begin <= end && end <= layers_.size(),
              name() << ".forward_range: [" << begin << ", " << end << ") is not inside [0, " << layers_.size()
                     << ")");
  CategoryScope scope(MemoryCategory::activation);
  Tensor h = x;
  for (size_t i = begin; i < end; ++i) {
    // A BatchNorm2d with a ReLU right after it (inside the range) runs as one fused op: the same
    // values, one pass fewer each way. Exactly those classes: a subclass may do more.
    if (i + 1 < end && typeid(*layers_[i]) == typeid(BatchNorm2d) && typeid(*layers_[i + 1]) == typeid(ReLU)) {
      h = static_cast<BatchNorm2d&>(*layers_[i]).forward_relu(h);
      ++i;
      continue;
    }
    h = layers_[i]->forward(h);
  }
  return h;
}

Tensor Sequential::forward_impl(const Tensor& x) { return forward_range(x, 0, layers_.size()); }

}  // namespace ember::nn
