#include "apps/train_resume.h"

#include "core/error.h"
#include "train/training_checkpoint.h"

namespace ember::apps {

data::SafetensorsMetadata run_identity(const TrainOptions& o, const train::TrainerOptions& t) {
  data::SafetensorsMetadata id{{"model", o.model},
                               {"data", o.data},
                               {"optimizer", o.optimizer},
                               {"lr", train::round_trip_text(o.lr)},
                               {"weight-decay", train::round_trip_text(o.weight_decay)},
                               {"schedule", o.schedule},
                               {"epochs", std::to_string(o.epochs)},
                               {"batch", std::to_string(o.batch)},
                               {"seed", std::to_string(o.seed)},
                               {"precision", train::precision_name(t.precision)},
                               {"checkpoint", t.checkpoint.str()},
                               {"accum", std::to_string(t.accum)}};
  if (o.optimizer == "sgd") {
    id["momentum"] = train::round_trip_text(o.momentum);
    id["nesterov"] = o.nesterov ? "on" : "off (--no-nesterov)";
  }
  if (o.data != "fashion-mnist") {
    id["samples-per-class"] = std::to_string(o.samples_per_class);
    id["classes"] = std::to_string(o.classes);
    id["noise"] = train::round_trip_text(o.noise);
  }
  return id;
}

void check_same_run(const std::string& path, const data::SafetensorsMetadata& saved,
                    const data::SafetensorsMetadata& current) {
  for (const auto& [flag, value] : current) {
    auto it = saved.find(flag);
    EMBER_CHECK(it != saved.end(), "--resume '" << path << "': the checkpoint does not record --" << flag
                                               << " (it was not written by `ember train --save`)");
    EMBER_CHECK(it->second == value, "--resume '" << path << "': the run was saved with --" << flag << " "
                                                  << it->second << "; this one has --" << flag << " " << value
                                                  << ". Resume with the options the run started with");
  }
}

}  // namespace ember::apps
