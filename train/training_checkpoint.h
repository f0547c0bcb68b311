#pragma once
// A training checkpoint: one safetensors file that holds everything a run needs to
// continue as if it had never stopped — the Trainer's state_dict (weights, fp32 masters,
// optimizer state, loss scaler, step count) as tensors, and as metadata where the run
// stands (epoch, next batch, the epoch's running loss and accuracy), the random
// generator, and whatever the caller adds (ember train: its options).
//
//   ember::train::TrainingPosition at{epoch, next_batch, loss_sum, correct, seen};
//   ember::train::save_training_checkpoint("run.ckpt", trainer, at, {{"model", "lenet5"}});
//   ...  // killed; a new process builds the same Trainer, then
//   ember::train::TrainingCheckpoint c = ember::train::read_training_checkpoint("run.ckpt");
//   ... check c.metadata against this run's options ...
//   ember::train::restore(c, trainer);                            // state and the global generator
//   loader.set_next_epoch(c.position.epoch, c.position.batch);
//
// The save is atomic (data/safetensors.h): killed while saving, the previous
// checkpoint stays whole. The weights keep their plain names, so any safetensors
// tool (and train::load_weights, ember eval --load) reads the file as weights.
#include <cstdint>
#include <string>

#include "core/generator.h"
#include "data/safetensors.h"
#include "train/trainer.h"

namespace ember::train {

// Where a run stands between two steps: the next batch to train is `batch` of `epoch`.
struct TrainingPosition {
  int64_t epoch = 0;
  int64_t batch = 0;
  double loss_sum = 0.0;  // of the epoch so far: sum of batch loss x batch size
  int64_t correct = 0;    // of the epoch so far
  int64_t seen = 0;       // samples of the epoch so far
};

struct TrainingCheckpoint {
  std::string path;
  TrainingPosition position;
  data::SafetensorsMetadata metadata;  // all of it, the caller's entries included
  TensorMap state;                     // a Trainer::state_dict, on the CPU
  GeneratorState generator;
};

inline constexpr const char* kTrainingCheckpointFormat = "ember training checkpoint 1";

// `metadata` is the caller's; the checkpoint's own keys ("format", "next_epoch", "next_batch",
// "epoch_loss_sum", "epoch_correct", "epoch_seen", "generator_seed", "generator_offset") may not
// appear in it.
void save_training_checkpoint(const std::string& path, const Trainer& trainer, const TrainingPosition& position,
                              const data::SafetensorsMetadata& metadata = {});
// Reads and checks the file; errors name the file and the field. Changes nothing else.
TrainingCheckpoint read_training_checkpoint(const std::string& path);
// Loads the state into `trainer` (built as for the saved run) and restores the global generator.
void restore(const TrainingCheckpoint& checkpoint, Trainer& trainer);
bool is_training_checkpoint(const data::SafetensorsMetadata& metadata);
// A double as text that reads back (strtod) as the same double: how metadata stores reals.
std::string round_trip_text(double value);

}  // namespace ember::train
