#pragma once
// Each zoo model's default training recipe: what reaches docs/results.md's accuracies, and what
// `ember train` uses for every option left out.
//
//   ember::models::Recipe r = ember::models::default_recipe("lenet5");  // SGD nesterov 0.05, onecycle, 2 epochs, batch 64
#include <cstdint>
#include <string>

namespace ember::models {

struct Recipe {
  std::string optimizer;  // optim::make_optimizer name: sgd | adam | adamw
  double lr;
  double momentum;
  bool nesterov;
  double weight_decay;
  std::string schedule;   // optim::make_schedule name
  int epochs;
  int64_t batch;
};

// A model of the zoo (models/zoo.h); any other name gets the MLP's recipe.
Recipe default_recipe(const std::string& model);

}  // namespace ember::models
