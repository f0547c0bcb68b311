#include "train/fit.h"

#include <chrono>

#include "core/error.h"
#include "memory/memory.h"
#include "train/training_checkpoint.h"

namespace ember::train {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

Device device_of(nn::Module& model) {
  const std::vector<Tensor> params = model.parameters();
  return params.empty() ? kCPU : params.front().device();
}

// Where the run starts: the checkpoint's position when resuming (its state is restored into
// the trainer), else the beginning.
TrainingPosition start_position(Trainer& trainer, const FitOptions& o) {
  if (o.resume.empty()) return {};
  const TrainingCheckpoint checkpoint = read_training_checkpoint(o.resume);
  check_same_run(o.resume, checkpoint.metadata, o.identity);
  restore(checkpoint, trainer);
  return checkpoint.position;
}

}  // namespace

void FitOptions::check() const {
  EMBER_CHECK(epochs >= 1, "FitOptions: epochs = " << epochs << ": train at least one epoch");
  EMBER_CHECK(save_every >= 0, "FitOptions: save_every = " << save_every << " must be >= 0 (0: at the end of each epoch only)");
  EMBER_CHECK(save_every == 0 || !save.empty(),
              "FitOptions: save_every = " << save_every << " needs save, the file the checkpoint goes to");
}

void check_same_run(const std::string& path, const data::SafetensorsMetadata& saved,
                    const data::SafetensorsMetadata& current) {
  for (const auto& [key, value] : current) {
    auto it = saved.find(key);
    EMBER_CHECK(it != saved.end(), "resume '" << path << "': the checkpoint does not record the run's " << key
                                              << " (it was saved by another kind of run); this one has " << key << " = "
                                              << value);
    EMBER_CHECK(it->second == value, "resume '" << path << "': the run was saved with " << key << " = " << it->second
                                                << "; this one has " << key << " = " << value
                                                << ". Resume with the options the run started with");
  }
}

FitResult fit(Trainer& trainer, data::DataLoader& train_loader, data::DataLoader* eval_loader, const FitOptions& o,
              const FitCallbacks& callbacks) {
  o.check();
  const Device device = device_of(trainer.model());
  const TrainingPosition start = start_position(trainer, o);
  auto save = [&](const TrainingPosition& at) {
    if (!o.save.empty()) save_training_checkpoint(o.save, trainer, at, o.identity);
  };

  FitResult result;
  result.first_step = trainer.steps();
  result.start_epoch = start.epoch;
  int64_t step = result.first_step;
  const int64_t samples = train_loader.epoch_size();
  train_loader.set_next_epoch(start.epoch, start.batch);
  for (int64_t epoch = start.epoch + 1; epoch <= o.epochs; ++epoch) {
    reset_peak_stats(device);
    if (callbacks.on_epoch_start) callbacks.on_epoch_start(epoch);
    const Clock::time_point epoch_start = Clock::now();
    const bool resumed = epoch == start.epoch + 1;
    int64_t correct = resumed ? start.correct : 0, done = resumed ? start.seen : 0;
    double loss_sum = resumed ? start.loss_sum : 0.0;
    const int64_t done_before = done;
    for (data::Batch& batch : train_loader) {
      if (callbacks.before_step) callbacks.before_step(step - result.first_step);
      if (o.schedule) o.schedule->apply(trainer.optimizer(), step);
      ++step;
      StepProgress progress{epoch, 0, samples, 0.0, trainer.step(batch.images, batch.target())};
      correct += progress.step.correct;
      loss_sum += progress.step.loss * static_cast<double>(batch.size());
      done += batch.size();
      progress.samples_done = done;
      progress.mean_loss = loss_sum / static_cast<double>(done);
      if (callbacks.on_step) callbacks.on_step(progress);
      if (o.save_every > 0 && trainer.steps() % o.save_every == 0)
        save({epoch - 1, batch.index + 1, loss_sum, correct, done});
    }
    EpochResult e;
    e.epoch = epoch;
    e.seconds = seconds_since(epoch_start);
    e.samples = done - done_before;
    e.loss = done > 0 ? loss_sum / static_cast<double>(done) : 0.0;
    e.accuracy = done > 0 ? static_cast<double>(correct) / static_cast<double>(done) : 0.0;
    e.memory = memory_stats(device);
    if (eval_loader != nullptr) e.eval = evaluate(trainer.model(), *eval_loader, trainer.options().loss);
    result.train_seconds += e.seconds;
    result.trained_samples += e.samples;
    result.final_loss = e.loss;
    result.final_eval = e.eval;
    save({epoch, 0, 0.0, 0, 0});
    if (callbacks.on_epoch) callbacks.on_epoch(e);
    result.epochs.push_back(std::move(e));
  }
  if (result.epochs.empty() && eval_loader != nullptr)  // resumed after the last epoch: nothing left to train
    result.final_eval = evaluate(trainer.model(), *eval_loader, trainer.options().loss);
  result.steps = trainer.steps();
  return result;
}

}  // namespace ember::train
