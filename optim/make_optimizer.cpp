#include "optim/make_optimizer.h"

#include "core/error.h"
#include "optim/adam.h"
#include "optim/sgd.h"

namespace ember::optim {

std::vector<std::string> optimizer_names() { return {"sgd", "adam", "adamw"}; }

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, std::vector<Tensor> params) {
  if (spec.name == "sgd") {
    return std::make_unique<SGD>(std::move(params), SgdOptions(spec.lr)
                                                        .momentum(spec.momentum)
                                                        .nesterov(spec.nesterov && spec.momentum > 0.0)
                                                        .weight_decay(spec.weight_decay));
  }
  if (spec.name == "adam") return std::make_unique<Adam>(std::move(params), AdamOptions(spec.lr).weight_decay(spec.weight_decay));
  if (spec.name == "adamw") return std::make_unique<AdamW>(std::move(params), AdamOptions(spec.lr).weight_decay(spec.weight_decay));
  EMBER_THROW("make_optimizer: unknown optimizer '" << spec.name << "' (known: sgd, adam, adamw)");
}

}  // namespace ember::optim
