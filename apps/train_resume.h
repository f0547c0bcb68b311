#pragma once
// What `ember train --save` records about the run in its checkpoint: the options that make it
// the run it is (a different batch, schedule or seed would not be the same run). train::fit
// checks a resumed run against it (train::check_same_run):
//
//   data::SafetensorsMetadata id = run_identity(options, trainer_options);  // {"model": "lenet5", "batch": "64", ...}
//   // --resume with --batch 128: "--resume 'run.ckpt': the run was saved with --batch 64; this one has --batch 128 ..."
//
// Keys are the flags' names without "--" (the techniques are the ones the run chose,
// --memory-budget's choice included). --threads, --device and the output flags may change.
#include "apps/train_command.h"
#include "data/safetensors.h"
#include "train/trainer.h"

namespace ember::apps {

data::SafetensorsMetadata run_identity(const TrainOptions& options, const train::TrainerOptions& trainer);

}  // namespace ember::apps
