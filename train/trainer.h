#pragma once
// train::Trainer: one training step with the memory techniques switched on by
// options — what train::fit (train/fit.h), `ember train` and `ember bench-train` run.
//
//   ember::train::TrainerOptions o;
//   o.precision = ember::train::Precision::fp16;               // f16 weights/activations, fp32 masters
//   o.checkpoint = ember::train::CheckpointPolicy::sqrt();      // recompute ceil(sqrt(n)) segments
//   o.accum = 4;                                               // 4 micro-batches per optimizer step
//   ember::train::Trainer trainer(model, [](std::vector<ember::Tensor> params) {
//     return std::make_unique<ember::optim::SGD>(std::move(params), ember::optim::SgdOptions(0.05).momentum(0.9));
//   }, o);
//   for (ember::data::Batch& b : loader) {
//     ember::train::StepResult r = trainer.step(b.images, b.labels);   // r.loss, r.correct, r.stepped
//   }
//   ember::Tensor logits = trainer.predict(test_images);              // no graph, model's precision
//
//   o.loss = [](const ember::Tensor& y, const ember::Tensor& t) { return ember::mse_loss(y, t); };  // regression
//   o.data_parallel.group = &ember::dist::world();   // under mpirun: one rank of a data-parallel job
//
// A step: zero the gradients; for each micro-batch (the batch split along dim 0),
// forward (checkpointed when asked), the loss (cross-entropy unless options.loss says
// otherwise) weighted by micro/batch size (so the sum is the full batch's mean loss),
// scaled by the loss scale under fp16, backward (gradients add up in .grad, or in the fp32
// master gradients under fp16); then one optimizer step (skipped under fp16 if any
// micro-batch had an inf/NaN). Under fp32 a loss that is inf or NaN stops the step before
// the update with an ember::Error naming the step: the weights stay those of the step before.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "models/module.h"
#include "optim/grad_scaler.h"
#include "optim/optimizer.h"
#include "train/checkpoint_policy.h"
#include "train/data_parallel.h"
#include "train/step_optimizer.h"

namespace ember::train {

// The training objective of a model's output for its targets: a mean over the samples (each
// micro-batch's loss is weighted by its share of the batch, so the sum is the batch's mean).
using LossFn = std::function<Tensor(const Tensor& output, const Tensor& target)>;

struct TrainerOptions {
  Precision precision = Precision::fp32;
  CheckpointPolicy checkpoint;   // needs an nn::Sequential model (every zoo model is one)
  int64_t accum = 1;             // micro-batches per optimizer step
  optim::GradScalerOptions scaler;  // fp16 only
  LossFn loss;                   // empty: cross_entropy(output, target), targets i64 class indices
  DataParallelOptions data_parallel;  // a group: train data-parallel over its ranks (train/data_parallel.h)

  // Throws an error naming the field (accum = 0, ...). With a batch, also an accum that does
  // not split it into equal micro-batches: the Trainer takes unequal ones (an epoch's smaller
  // last batch), but a run planned for one micro-batch size (train/plan/) needs them equal.
  void check(int64_t batch = 0) const;
};

struct StepResult {
  double loss = 0.0;        // mean loss over the whole batch (unscaled)
  int64_t correct = 0;      // argmax hits over the whole batch, when the targets are class labels (0 otherwise)
  bool stepped = true;      // false: fp16 found an inf/NaN gradient and skipped the update
  double loss_scale = 1.0;  // the scale the step used (1 in fp32)
};

class Trainer {
 public:
  // Converts the model's parameters to f16 under fp16 (buffers stay fp32), builds the optimizer
  // over the parameters (fp32: the model's; fp16: the fp32 masters), and checks the options.
  // Move the model to its device before. Data-parallel: every rank calls it together; the ranks'
  // options must agree (else each throws naming them), and rank 0's parameters and buffers are
  // broadcast to the others.
  Trainer(std::shared_ptr<nn::Module> model, const OptimizerFactory& make_optimizer,
          const TrainerOptions& options = {});

  // One optimizer step on inputs [B, ...] (f32; cast to f16 under fp16) and targets [B, ...]
  // (labels [B] i64 for the default loss). Splits into min(accum, B) micro-batches of near-equal size. An OutOfMemoryError gets a line on which techniques
  // this step already used and which are left (or the advice set below). All or nothing: a
  // step that throws leaves the parameters, the buffers (train/buffer_rollback.h) and the
  // optimizer's state as they were; the gradients it made go at the next step's zero_grad.
  StepResult step(const Tensor& inputs, const Tensor& targets);
  // Replaces that line: `advice(micro_batch)` runs after the failed step's tensors are freed.
  // ember train sets one that quotes the planner's figures (apps/memory_budget.h).
  using OutOfMemoryAdvice = std::function<std::string(int64_t micro_batch)>;
  void set_out_of_memory_advice(OutOfMemoryAdvice advice) { out_of_memory_advice_ = std::move(advice); }
  // The model's output for inputs, in its current mode, without recording a graph.
  Tensor predict(const Tensor& inputs);
  // options().loss, or cross-entropy: what step() minimises.
  Tensor loss(const Tensor& output, const Tensor& target) const;

  nn::Module& model() { return *model_; }
  // The optimizer whose learning rate a schedule sets (under fp16, the one that steps the masters).
  optim::Optimizer& optimizer() { return optimizer_->inner(); }
  const TrainerOptions& options() const { return options_; }
  int64_t checkpoint_segments() const { return segments_; }  // 0: off
  // Where each segment starts, measured on the first checkpointed step (empty before).
  const std::vector<int64_t>& checkpoint_bounds() const { return segment_bounds_; }
  double loss_scale() const { return optimizer_->loss_scale(); }
  int64_t skipped_steps() const { return optimizer_->skipped_steps(); }
  int64_t steps() const { return steps_; }  // calls to step() that completed

  // Everything a resumed run needs: the model's state_dict, "optimizer.<...>" (the optimizer's
  // state_dict; under fp16 the MixedPrecisionOptimizer's: masters, inner optimizer, loss
  // scaler) and "trainer.steps". A bad entry throws naming it and `source`; the model is
  // loaded first, so after an error start from a fresh Trainer.
  NamedTensors state_dict() const;
  void load_state_dict(const TensorMap& state, const std::string& source = "state_dict");

 private:
  Tensor forward(const Tensor& inputs);  // precision cast + checkpointing
  StepResult run_step(const Tensor& inputs, const Tensor& targets);
  std::string what_is_left(int64_t micro_batch) const;

  std::shared_ptr<nn::Module> model_;
  TrainerOptions options_;
  int64_t segments_ = 0;
  std::vector<int64_t> segment_bounds_;       // where each checkpoint segment starts
  std::vector<int64_t> bounds_sample_sizes_;  // the per-sample shape they were measured for
  std::unique_ptr<StepOptimizer> optimizer_;  // fp32: the model's parameters; fp16: their fp32 masters
  OutOfMemoryAdvice out_of_memory_advice_;
  int64_t steps_ = 0;
};

// The model's entries of a Trainer::state_dict (what load_weights takes from a checkpoint).
TensorMap model_entries(const TensorMap& trainer_state);

}  // namespace ember::train
