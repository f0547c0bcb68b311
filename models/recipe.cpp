#include "models/recipe.h"

namespace ember::models {

Recipe default_recipe(const std::string& model) {
  // Nesterov SGD with a one-cycle schedule converges fast enough for the few-epoch targets of
  // docs/results.md; the MLP keeps the synthetic-data recipe it was tuned with.
  if (model == "lenet5") return {"sgd", 0.05, 0.9, true, 5e-4, "onecycle", 2, 64};
  if (model == "convnet") return {"sgd", 0.05, 0.9, true, 5e-4, "onecycle", 3, 128};
  if (model == "resnet20") return {"sgd", 0.1, 0.9, true, 5e-4, "onecycle", 5, 128};
  return {"sgd", 0.1, 0.9, false, 0.0, "cosine", 20, 64};
}

}  // namespace ember::models
