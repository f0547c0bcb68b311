#include "optim/param_group.h"

#include "core/error.h"

namespace ember::optim {

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<ParamGroup> decay_groups(const std::vector<std::pair<std::string, Tensor>>& named, double weight_decay) {
  EMBER_CHECK(weight_decay >= 0.0, "decay_groups: weight_decay must be >= 0, got " << weight_decay);
  ParamGroup decay{{}, std::nullopt, weight_decay};
  ParamGroup no_decay{{}, std::nullopt, 0.0};
  for (const auto& [name, param] : named) {
    EMBER_CHECK(param.defined(), "decay_groups: parameter '" << name << "' is undefined");
    const bool exempt = ends_with(name, "bias") || param.dim() <= 1;
    (exempt ? no_decay : decay).params.push_back(param);
  }
  return {std::move(decay), std::move(no_decay)};
}

}  // namespace ember::optim
