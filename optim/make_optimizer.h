#pragma once
// An optimizer chosen by name, as a run's options describe it (ember train --optimizer, a
// model's recipe), beside make_schedule (optim/lr_schedule.h):
//
//   ember::optim::OptimizerSpec spec;   // sgd
//   spec.lr = 0.05;
//   spec.momentum = 0.9;
//   spec.nesterov = true;
//   std::unique_ptr<ember::optim::Optimizer> opt = ember::optim::make_optimizer(spec, model->parameters());
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "optim/optimizer.h"

namespace ember::optim {

struct OptimizerSpec {
  std::string name = "sgd";  // sgd | adam | adamw
  double lr = 0.01;
  double momentum = 0.0;      // sgd only
  bool nesterov = false;      // sgd only, with momentum > 0
  double weight_decay = 0.0;  // L2 for sgd and adam, decoupled for adamw (given explicitly: AdamW's own default is 0.01)
};

std::vector<std::string> optimizer_names();
// Throws naming the known names for an unknown one.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, std::vector<Tensor> params);

}  // namespace ember::optim
