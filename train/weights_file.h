#pragma once
// A model's weights in a safetensors file: every parameter and buffer under its
// dotted name, readable by any safetensors tool.
//
//   ember::train::save_weights("lenet5.safetensors", *model, {{"epoch", "2"}});
//   ember::train::load_weights("lenet5.safetensors", *model);  // errors name the file, tensor, both shapes
//
// The save is atomic (data/safetensors.h): a failed save leaves the last good file.
// load_weights also reads a training checkpoint (train/training_checkpoint.h): it
// takes the model's tensors and leaves the optimizer's and the trainer's state aside.
#include <string>

#include "data/safetensors.h"
#include "models/module.h"

namespace ember::train {

void save_weights(const std::string& path, const nn::Module& model, const data::SafetensorsMetadata& metadata = {});
// A tensor the model lacks, a missing one or a shape mismatch throws (nothing is copied then).
void load_weights(const std::string& path, nn::Module& model);

}  // namespace ember::train
