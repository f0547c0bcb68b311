#include "apps/train_resume.h"

#include "train/training_checkpoint.h"

namespace ember::apps {

data::SafetensorsMetadata run_identity(const TrainOptions& o, const train::TrainerOptions& t) {
  data::SafetensorsMetadata id{{"model", o.run.model},
                               {"data", o.data},
                               {"optimizer", o.run.optimizer},
                               {"lr", train::round_trip_text(o.lr)},
                               {"weight-decay", train::round_trip_text(o.weight_decay)},
                               {"schedule", o.schedule},
                               {"epochs", std::to_string(o.epochs)},
                               {"batch", std::to_string(o.run.batch)},
                               {"seed", std::to_string(o.seed)},
                               {"precision", train::precision_name(t.precision)},
                               {"checkpoint", t.checkpoint.str()},
                               {"accum", std::to_string(t.accum)}};
  if (o.run.optimizer == "sgd") {
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

}  // namespace ember::apps
