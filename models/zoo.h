#pragma once
// The model zoo: builds a model by name for an input shape (without the batch
// dim) and a number of classes.
//
//   auto model = ember::models::make_model("mlp", ember::Shape{2}, 3);
//   for (const auto& name : ember::models::model_names()) std::cout << name << "\n";
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/shape.h"
#include "models/module.h"

namespace ember::models {

// Throws naming the known models when `name` is not one of them.
std::shared_ptr<nn::Module> make_model(const std::string& name, const Shape& input_shape, int64_t num_classes);
std::vector<std::string> model_names();

}  // namespace ember::models
