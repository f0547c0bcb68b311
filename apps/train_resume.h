#pragma once
// What `ember train --save` records about the run in its checkpoint, and the check
// `--resume` makes with it: a run continues only with the options it started with
// (a different batch, schedule or seed would not be the same run).
//
//   data::SafetensorsMetadata id = run_identity(options, trainer_options);  // {"model": "lenet5", "batch": "64", ...}
//   check_same_run("run.ckpt", loaded.metadata, id);   // throws: "... saved with --batch 64; this run has --batch 128 ..."
//
// Keys are the flags' names without "--" (the techniques are the ones the run chose,
// --memory-budget's choice included). --threads, --device and the output flags may change.
#include <string>

#include "apps/train_command.h"
#include "data/safetensors.h"
#include "train/trainer.h"

namespace ember::apps {

data::SafetensorsMetadata run_identity(const TrainOptions& options, const train::TrainerOptions& trainer);
void check_same_run(const std::string& path, const data::SafetensorsMetadata& saved,
                    const data::SafetensorsMetadata& current);

}  // namespace ember::apps
