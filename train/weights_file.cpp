#include "train/weights_file.h"

#include "train/training_checkpoint.h"

namespace ember::train {

void save_weights(const std::string& path, const nn::Module& model, const data::SafetensorsMetadata& metadata) {
  data::save_safetensors(path, model.state_dict(), metadata);
}

void load_weights(const std::string& path, nn::Module& model) {
  data::SafetensorsMetadata metadata;
  TensorMap tensors = data::load_safetensors(path, &metadata);
  if (is_training_checkpoint(metadata)) tensors = model_entries(tensors);
  model.load_state_dict(tensors, "'" + path + "'");
}

}  // namespace ember::train
