#include "models/zoo.h"

#include <sstream>

#include "core/error.h"
#include "models/mlp.h"

namespace ember::models {

namespace {
// Two hidden layers of 128: enough for the synthetic problems and MNIST-sized inputs.
const std::vector<int64_t> kMlpHidden = {128, 128};
}  // namespace

std::vector<std::string> model_names() { return {"mlp"}; }

std::shared_ptr<nn::Module> make_model(const std::string& name, const Shape& input_shape, int64_t num_classes) {
  EMBER_CHECK(num_classes > 0, "make_model: num_classes must be positive, got " << num_classes);
  if (name == "mlp") return std::make_shared<nn::MLP>(input_shape, kMlpHidden, num_classes);
  std::ostringstream known;
  for (const std::string& n : model_names()) known << (known.tellp() > 0 ? ", " : "") << n;
  EMBER_THROW("make_model: unknown model '" << name << "' (known: " << known.str() << ")");
}

}  // namespace ember::models
