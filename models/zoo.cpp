#include "models/zoo.h"

#include <sstream>

#include "core/error.h"
#include "models/activation.h"
#include "models/flatten.h"
#include "models/linear.h"
#include "models/mlp.h"
#include "models/resnet.h"
#include "models/batch_norm.h"
#include "models/pooling.h"

namespace ember::models {

namespace {

using Layers = std::initializer_list<std::shared_ptr<nn::Module>>;

// docs/models.md's MLP: 784 -> 256 -> 128 -> classes on 28x28x1.
const std::vector<int64_t> kMlpHidden = {256, 128};

std::shared_ptr<nn::Module> relu() { return std::make_shared<nn::ReLU>(); }

void check_image(const std::string& name, const Shape& input) {
  EMBER_CHECK(input.dim() == 3, "make_model: '" << name << "' needs an image input [C, H, W], got " << input);
}

// Spatial size after a 5x5 valid conv and two 2x2 pools (LeNet-5), or two pools (ConvNet).
std::shared_ptr<nn::Module> make_lenet5(const Shape& input, int64_t classes) {
  check_image("lenet5", input);
  const int64_t h = ((input[1] / 2) - 4) / 2, w = ((input[2] / 2) - 4) / 2;
  EMBER_CHECK(h > 0 && w > 0, "make_model: lenet5 needs at least 12x12 images, got " << input);
  return std::make_shared<nn::Sequential>(Layers{
      conv_layer(input[0], 6, 5, 1, 2), relu(), std::make_shared<nn::MaxPool2d>(2),
      conv_layer(6, 16, 5), relu(), std::make_shared<nn::MaxPool2d>(2),
      std::make_shared<nn::Flatten>(),
      std::make_shared<nn::Linear>(16 * h * w, 120), relu(),
      std::make_shared<nn::Linear>(120, 84), relu(),
      std::make_shared<nn::Linear>(84, classes)});
}

std::shared_ptr<nn::Module> make_convnet(const Shape& input, int64_t classes) {
  check_image("convnet", input);
  const int64_t h = input[1] / 4, w = input[2] / 4;
  EMBER_CHECK(h > 0 && w > 0, "make_model: convnet needs at least 4x4 images, got " << input);
  auto block = [](int64_t in, int64_t out) -> std::vector<std::shared_ptr<nn::Module>> {
    return {conv_layer(in, out, 3, 1, 1), std::make_shared<nn::BatchNorm2d>(out), relu()};
  };
  auto net = std::make_shared<nn::Sequential>();
  for (auto& m : block(input[0], 32)) net->push_back(m);
  for (auto& m : block(32, 32)) net->push_back(m);
  net->push_back(std::make_shared<nn::MaxPool2d>(2));
  for (auto& m : block(32, 64)) net->push_back(m);
  for (auto& m : block(64, 64)) net->push_back(m);
  net->push_back(std::make_shared<nn::MaxPool2d>(2));
  net->push_back(std::make_shared<nn::Flatten>());
  net->push_back(std::make_shared<nn::Linear>(64 * h * w, 128));
  net->push_back(relu());
  net->push_back(std::make_shared<nn::Linear>(128, classes));
  return net;
}

}  // namespace

std::vector<std::string> model_names() { return {"mlp", "lenet5", "convnet", "resnet20"}; }

std::shared_ptr<nn::Module> make_model(const std::string& name, const Shape& input_shape, int64_t num_classes) {
  EMBER_CHECK(num_classes > 0, "make_model: num_classes must be positive, got " << num_classes);
  if (name == "mlp") return std::make_shared<nn::MLP>(input_shape, kMlpHidden, num_classes);
  if (name == "lenet5") return make_lenet5(input_shape, num_classes);
  if (name == "convnet") return make_convnet(input_shape, num_classes);
  if (name == "resnet20") {
    check_image("resnet20", input_shape);
    return make_resnet20(input_shape[0], num_classes);
  }
  std::ostringstream known;
  for (const std::string& n : model_names()) known << (known.tellp() > 0 ? ", " : "") << n;
  EMBER_THROW("make_model: unknown model '" << name << "' (known: " << known.str() << ")");
}

}  // namespace ember::models
