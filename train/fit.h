#pragma once
// train::fit: a whole training run as one call — epochs over a loader, the learning-rate
// schedule set before every optimizer step, an evaluation after every epoch, a training
// checkpoint after every epoch (and every save_every steps), and resuming from one. It is
// what `ember train` runs; the command only turns flags into these options and prints.
//
//   ember::train::FitOptions o;
//   o.epochs = 3;
//   o.schedule = ember::optim::make_schedule("onecycle", 0.05, train_loader.batches_per_epoch() * 3);
//   o.save = "run.ckpt";                       // atomically, after each epoch
//   o.identity = {{"model", "lenet5"}, {"batch", "64"}};   // what a resumed run must match
//   ember::train::FitCallbacks c;
//   c.on_epoch = [](const ember::train::EpochResult& e) { std::cout << e.epoch << " " << e.loss << "\n"; };
//   ember::train::FitResult r = ember::train::fit(trainer, train_loader, &test_loader, o, c);
//   // killed? the same program with o.resume = "run.ckpt" continues, and ends with the same bytes
//
// Resuming: the Trainer (built as for the saved run), the loaders and the options must be
// those of the run that saved the checkpoint; fit checks `identity` against the one saved,
// restores the trainer's state and the global generator, and starts at the saved batch of
// the saved epoch, with that epoch's running loss and accuracy. The result is bit for bit the
// uninterrupted run's (tests/apps/resume_after_kill.sh kills runs at random moments).
//
// Memory: the model's device's peak statistics are reset at the start of every epoch, so an
// EpochResult's memory holds that epoch's peaks (evaluation excluded).
//
// Data parallel (the trainer's options name a group, train/data_parallel.h): every rank calls
// fit with its own part of the data (DataLoaderOptions::shard; the evaluation loader with
// ShardEnds::uneven, so every test sample counts once). The epoch's loss and accuracy and the
// evaluation are the job's, summed over the ranks, the same on every rank; StepProgress is this
// rank's. Each rank saves and resumes its own file (train/rank_checkpoint.h); the saved identity
// gains the ranks, the rank, the ZeRO stage and the bucket size, so a run resumes as it started.
// Memory statistics are this rank's.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/data_loader.h"
#include "data/safetensors.h"
#include "memory/stats.h"
#include "optim/lr_schedule.h"
#include "train/evaluate.h"
#include "train/trainer.h"

namespace ember::train {

struct FitOptions {
  int64_t epochs = 1;
  std::shared_ptr<const optim::LrSchedule> schedule;  // per optimizer step; none: the optimizer's rate stays
  std::string save;             // a training checkpoint (train/training_checkpoint.h) after each epoch; empty: none
  int64_t save_every = 0;       // also every N optimizer steps (needs save)
  std::string resume;           // continue the run saved in this checkpoint; empty: start afresh
  data::SafetensorsMetadata identity;  // the run's options, saved with each checkpoint and checked on resume

  // Throws naming the field: epochs below 1, a negative save_every, save_every without save.
  void check() const;
};

// How far the run is, after each step (the progress bar's input).
struct StepProgress {
  int64_t epoch = 0;          // 1-based
  int64_t samples_done = 0;   // of this epoch
  int64_t samples_total = 0;  // in the epoch
  double mean_loss = 0.0;     // over the epoch's samples so far
  StepResult step;
};

struct EpochResult {
  int64_t epoch = 0;          // 1-based
  double loss = 0.0;          // mean training loss over the epoch's samples
  double accuracy = 0.0;      // training accuracy (class labels), 0 otherwise
  std::optional<Evaluation> eval;  // after the epoch, when fit was given an evaluation loader
  double seconds = 0.0;       // the training loop (evaluation excluded)
  int64_t samples = 0;        // trained by this call (less in a resumed epoch)
  MemoryStats memory;         // the device's statistics at the epoch's end: peaks are the epoch's
};

struct FitResult {
  std::vector<EpochResult> epochs;   // those this call trained
  int64_t first_step = 0;            // trainer.steps() when the run started (resumed: the saved count)
  int64_t steps = 0;                 // trainer.steps() at the end
  int64_t start_epoch = 0;           // epochs already done when this call began (resumed runs)
  int64_t trained_samples = 0;
  double train_seconds = 0.0;        // the training loops, evaluation excluded
  std::optional<Evaluation> final_eval;  // the last epoch's (or, with nothing left to train, one made now)
  double final_loss = 0.0;           // the last epoch's mean training loss
};

struct FitCallbacks {
  std::function<void(int64_t epoch)> on_epoch_start;
  std::function<void(int64_t step)> before_step;  // step: this call's steps so far (0 first)
  std::function<void(const StepProgress&)> on_step;
  std::function<void(const EpochResult&)> on_epoch;
};

// Trains `trainer` on `train_loader` for options.epochs epochs, each step on a batch's images and
// its target() (the labels, or the targets of a dataset whose samples carry them);
// `eval_loader` (may be null) is evaluated with the trainer's loss after each epoch.
FitResult fit(Trainer& trainer, data::DataLoader& train_loader, data::DataLoader* eval_loader, const FitOptions& options,
              const FitCallbacks& callbacks = {});

// Throws unless `saved` records every entry of `current` with the same value: "resume 'run.ckpt':
// the run was saved with batch = 64; this one has batch = 128 ...".
void check_same_run(const std::string& path, const data::SafetensorsMetadata& saved,
                    const data::SafetensorsMetadata& current);

}  // namespace ember::train
