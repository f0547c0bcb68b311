#include "train/fit.h"

#include <chrono>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/factories.h"
#include "memory/memory.h"
#include "train/rank_checkpoint.h"
#include "train/training_checkpoint.h"

namespace ember::train {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

Device device_of(nn::Module& model) {
  const std::vector<Tensor> params = model.parameters();
  return params.empty() ? kCPU : params.front().device();
}

dist::ProcessGroup* group_of(const Trainer& trainer) { return trainer.options().data_parallel.group; }

// What a resumed run must match: the caller's entries, and under data parallelism the ranks,
// this file's rank, the ZeRO stage and the buckets (each rank's file holds its own shard of the
// state, cut by bucket).
data::SafetensorsMetadata run_identity(const Trainer& trainer, const FitOptions& o) {
  data::SafetensorsMetadata identity = o.identity;
  if (const dist::ProcessGroup* group = group_of(trainer)) {
    identity["data_parallel.ranks"] = std::to_string(group->size());
    identity["data_parallel.rank"] = std::to_string(group->rank());
    identity["data_parallel.zero"] = std::to_string(trainer.options().data_parallel.zero);
    identity["data_parallel.bucket_bytes"] = std::to_string(trainer.options().data_parallel.bucket_bytes);
  }
  return identity;
}

// Where the run starts: the checkpoint's position when resuming (its state is restored into
// the trainer), else the beginning. The ranks of a data-parallel run each read their own file,
// of the step they all hold (train/rank_checkpoint.h).
TrainingPosition start_position(Trainer& trainer, const FitOptions& o) {
  if (o.resume.empty()) return {};
  dist::ProcessGroup* group = group_of(trainer);
  const TrainingCheckpoint checkpoint = group ? read_rank_checkpoint(o.resume, *group) : read_training_checkpoint(o.resume);
  check_same_run(checkpoint.path, checkpoint.metadata, run_identity(trainer, o));
  restore(checkpoint, trainer);
  return checkpoint.position;
}

// This rank's sums of an epoch (or an evaluation) made the job's: the same sums on every rank.
std::vector<double> sum_over_ranks(dist::ProcessGroup* group, std::vector<double> sums) {
  if (group == nullptr) return sums;
  const auto n = static_cast<int64_t>(sums.size());
  Tensor t = from_vector<double>(sums, Shape{n}, TensorOptions().dtype(DType::f64));
  group->all_reduce(t, dist::ReduceOp::sum);
  return std::vector<double>(t.data<double>(), t.data<double>() + n);
}

Evaluation evaluate_over_ranks(Trainer& trainer, data::DataLoader& loader) {
  dist::ProcessGroup* group = group_of(trainer);
  if (group != nullptr && trainer.options().data_parallel.broadcast_buffers)
    broadcast_buffers(trainer.model(), *group);  // every rank evaluates rank 0's statistics
  Evaluation e = evaluate(trainer.model(), loader, trainer.options().loss);
  if (group == nullptr) return e;
  const double samples = static_cast<double>(e.samples);
  const std::vector<double> sums = sum_over_ranks(group, {e.loss * samples, e.accuracy * samples, samples});
  e.samples = static_cast<int64_t>(sums[2]);
  if (e.samples > 0) {
    e.loss = sums[0] / sums[2];
    e.accuracy = std::round(sums[1]) / sums[2];  // hits: whole numbers
  }
  return e;
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
  dist::ProcessGroup* group = group_of(trainer);
  const TrainingPosition start = start_position(trainer, o);
  const data::SafetensorsMetadata identity = run_identity(trainer, o);
  auto save = [&](const TrainingPosition& at) {
    if (o.save.empty()) return;
    if (group) save_rank_checkpoint(o.save, *group, trainer, at, identity);
    else save_training_checkpoint(o.save, trainer, at, identity);
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
    e.memory = memory_stats(device);
    // Over every rank's part of the epoch.
    const std::vector<double> sums = sum_over_ranks(
        group, {loss_sum, static_cast<double>(correct), static_cast<double>(done), static_cast<double>(done - done_before)});
    e.samples = static_cast<int64_t>(sums[3]);
    e.loss = sums[2] > 0 ? sums[0] / sums[2] : 0.0;
    e.accuracy = sums[2] > 0 ? sums[1] / sums[2] : 0.0;
    if (eval_loader != nullptr) e.eval = evaluate_over_ranks(trainer, *eval_loader);
    result.train_seconds += e.seconds;
    result.trained_samples += e.samples;
    result.final_loss = e.loss;
    result.final_eval = e.eval;
    save({epoch, 0, 0.0, 0, 0});
    if (callbacks.on_epoch) callbacks.on_epoch(e);
    result.epochs.push_back(std::move(e));
  }
  if (result.epochs.empty() && eval_loader != nullptr)  // resumed after the last epoch: nothing left to train
    result.final_eval = evaluate_over_ranks(trainer, *eval_loader);
  result.steps = trainer.steps();
  return result;
}

}  // namespace ember::train
