#pragma once
// Tensors with names: what a module's state, an optimizer's state and a safetensors file hold.
//
//   ember::NamedTensors state = model->named_parameters();   // in registration order
//   ember::TensorMap by_name(state.begin(), state.end());    // looked up by name
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace ember {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using TensorMap = std::map<std::string, Tensor>;

}  // namespace ember
