#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/error.h"
#include "core/row_view.h"
#include "core/simulation.h"
#include "dist/same_on_all_ranks.h"
#include "memory/allocation_observer.h"
#include "memory/scopes.h"
#include "memory/out_of_memory.h"
#include "models/metrics.h"
#include "models/sequential.h"
#include "optim/state_dict.h"
#include "train/buffer_rollback.h"
#include "train/checkpoint_sequential.h"

namespace ember::train {

void TrainerOptions::check(int64_t batch) const {
  EMBER_CHECK(accum >= 1, "TrainerOptions: accum = " << accum << ": the micro-batches per optimizer step must be at least 1");
  EMBER_CHECK(batch <= 0 || batch % accum == 0,
              "TrainerOptions: accum = " << accum << " does not divide batch = " << batch << ": the micro-batch would be "
                                         << batch << "/" << accum << "; choose an accum that divides the batch (e.g. accum = "
                                         << (batch % 2 == 0 ? 2 : 1) << ")");
  checkpoint.check();
  data_parallel.check();
}

namespace {

// Refuses ranks built with different options or models: their collectives would not pair up.
void check_same_on_all_ranks(const TrainerOptions& o, nn::Module& model) {
  int64_t elements = 0;
  for (const Tensor& p : model.parameters()) elements += p.numel();
  dist::check_same_on_all_ranks({{"precision", precision_name(o.precision)},
                                 {"checkpoint", o.checkpoint.str()},
                                 {"accum", std::to_string(o.accum)},
                                 {"zero", std::to_string(o.data_parallel.zero)},
                                 {"bucket_bytes", std::to_string(o.data_parallel.bucket_bytes)},
                                 {"broadcast_buffers", o.data_parallel.broadcast_buffers ? "true" : "false"},
                                 {"overlap", o.data_parallel.overlap ? "true" : "false"},
                                 {"model", model.name()},
                                 {"model parameters", std::to_string(model.parameters().size()) + " tensors, " +
                                                          std::to_string(elements) + " elements"}},
                                *o.data_parallel.group);
}

}  // namespace

Trainer::Trainer(std::shared_ptr<nn::Module> model, const OptimizerFactory& make_optimizer,
                 const TrainerOptions& options)
    : model_(std::move(model)), options_(options) {
  EMBER_CHECK(model_ != nullptr, "Trainer: the model is null");
  options_.check();
  if (options_.checkpoint.enabled()) {
    auto* seq = dynamic_cast<nn::Sequential*>(model_.get());
    EMBER_CHECK(seq != nullptr, "Trainer: checkpointing splits an nn::Sequential into segments, but the model is a "
                                    << model_->name() << "; wrap its layers in a Sequential or call train::checkpoint "
                                                         "inside its forward");
    segments_ = options_.checkpoint.segments_for(static_cast<int64_t>(seq->size()));
  }
  const DataParallelOptions& dp = options_.data_parallel;
  EMBER_CHECK(dp.zero == 0 || dp.enabled(), "Trainer: data_parallel.zero = " << dp.zero
                                                << " shards over the ranks of a group, but data_parallel.group is null");
  if (dp.enabled() && !simulating()) {  // a planned step (train/plan/) has no other ranks to ask
    check_same_on_all_ranks(options_, *model_);
    broadcast_module(*model_, *dp.group);
  }
  if (options_.precision == Precision::fp16) model_->parameters_to(DType::f16);
  optimizer_ = make_step_optimizer(options_.precision, model_->parameters(), make_optimizer, options_.scaler,
                                   options_.data_parallel);
}

Tensor Trainer::loss(const Tensor& output, const Tensor& target) const {
  return options_.loss ? options_.loss(output, target) : cross_entropy(output, target);
}

Tensor Trainer::forward(const Tensor& inputs) {
  Tensor x = inputs;
  if (options_.precision == Precision::fp16 && is_floating(x.dtype()) && x.dtype() != DType::f16) {
    CategoryScope scope(MemoryCategory::data);  // the input batch, in the compute dtype
    x = to_dtype(inputs, DType::f16);
  }
  if (segments_ > 0 && GradMode::is_enabled()) {
    PhaseScope phase(Phase::forward);
    auto& seq = static_cast<nn::Sequential&>(*model_);
    // The split depends on the layers' sizes, so it is measured again when the input shape changes.
    std::vector<int64_t> sample_sizes = x.sizes();
    sample_sizes.erase(sample_sizes.begin());
    if (segment_bounds_.empty() || sample_sizes != bounds_sample_sizes_) {
      segment_bounds_ = balanced_segment_bounds(seq, segments_, x);
      bounds_sample_sizes_ = sample_sizes;
    }
    return checkpoint_sequential(seq, segment_bounds_, x);
  }
  return model_->forward(x);
}

Tensor Trainer::predict(const Tensor& inputs) {
  NoGradGuard no_grad;
  return forward(inputs);
}

std::string Trainer::what_is_left(int64_t micro_batch) const {
  std::ostringstream os;
  os << "This step ran with precision = " << precision_name(options_.precision) << ", checkpoint = "
     << options_.checkpoint.str() << ", accum = " << options_.accum << " (micro-batch " << micro_batch << ")";
  if (options_.data_parallel.enabled()) os << ", zero = " << options_.data_parallel.zero;
  os << "; still to try:";
  std::vector<std::string> left;
  if (options_.precision == Precision::fp32) left.push_back("precision = fp16");
  if (segments_ == 0) left.push_back("checkpoint = sqrt");
  const DataParallelOptions& dp = options_.data_parallel;
  if (dp.enabled() && dp.zero < 2) left.push_back("zero = " + std::to_string(dp.zero + 1));
  if (micro_batch > 1)
    left.push_back("accum = " + std::to_string(options_.accum * 2) + " (micro-batch " + std::to_string((micro_batch + 1) / 2) + ")");
  if (left.empty()) left.push_back("a smaller model or a larger memory budget");
  for (size_t i = 0; i < left.size(); ++i) os << (i == 0 ? " " : ", ") << left[i];
  os << ".";
  return os.str();
}

StepResult Trainer::step(const Tensor& inputs, const Tensor& targets) {
  try {
    return run_step(inputs, targets);
  } catch (const OutOfMemoryError& e) {
    const int64_t micro_batch = (inputs.size(0) + options_.accum - 1) / options_.accum;
    const std::string advice = out_of_memory_advice_ ? out_of_memory_advice_(micro_batch) : what_is_left(micro_batch);
    throw OutOfMemoryError(std::string(e.what()) + "\n" + advice, e.requested_bytes());
  }
}

StepResult Trainer::run_step(const Tensor& inputs, const Tensor& targets) {
  EMBER_CHECK(inputs.defined() && targets.defined() && inputs.dim() >= 1 && targets.dim() >= 1 &&
                  inputs.size(0) == targets.size(0),
              "Trainer::step: inputs " << inputs.str() << " and targets " << targets.str()
                                       << " must hold the same number of samples along dim 0");
  const int64_t batch = inputs.size(0);
  EMBER_CHECK(batch > 0, "Trainer::step: empty batch " << inputs.shape());
  const int64_t micro_batches = std::min(options_.accum, batch);
  // Class labels: a model's [B, C] output and [B] i64 targets, whose argmax hits are counted.
  const bool classifying = targets.dtype() == DType::i64 && targets.dim() == 1;
  StepResult result;
  result.loss_scale = loss_scale();
  const DataParallelOptions& dp = options_.data_parallel;
  if (dp.enabled() && dp.broadcast_buffers) broadcast_buffers(*model_, *dp.group);
  const double ranks = dp.ranks();
  BufferRollback rollback(*model_);  // forward updates the running statistics; a failed step puts them back

  optimizer_->zero_grad();
  for (int64_t m = 0, begin = 0; m < micro_batches; ++m) {
    const int64_t count = batch / micro_batches + (m < batch % micro_batches ? 1 : 0);
    const Tensor x = row_view(inputs, begin, count), y = row_view(targets, begin, count);
    begin += count;
    const Tensor output = forward(x);
    const Tensor micro_loss_tensor = loss(output, y);  // cross-entropy's is f32 also under fp16
    EMBER_CHECK(micro_loss_tensor.numel() == 1,
                "Trainer::step: the loss must be one number (a mean over the samples), got " << micro_loss_tensor.str());
    if (classifying && output.dim() == 2) result.correct += models::count_correct(output.detach(), y);
    // Each micro-batch's mean loss weighted by its share of the batch: the sum is the batch mean.
    const double weight = static_cast<double>(count) / static_cast<double>(batch);
    const double micro_loss = micro_loss_tensor.item<double>();
    // Under fp16 the loss scaler owns this case: the gradients are inf/NaN too and the step is skipped.
    EMBER_CHECK(optimizer_->skips_nonfinite_steps() || std::isfinite(micro_loss),
                "Trainer::step: the loss of step " << steps_ + 1 << " is "
                    << (std::isnan(micro_loss) ? "nan" : micro_loss > 0 ? "inf" : "-inf") << " (micro-batch " << m + 1
                    << " of " << micro_batches << "); training stopped before this step's update, so the weights "
                       "are those after step " << steps_ << ". Lower the learning rate, or find the first op "
                       "whose output is not finite with anomaly detection (DetectAnomalyGuard)");
    result.loss += micro_loss * weight;
    optimizer_->begin_backward(m == micro_batches - 1);
    // Data parallel: the ranks' micro-batches are the job's, each weighted by its share of all
    // ranks' samples before backward, and the ranks' gradients summed (train/data_parallel.h).
    optimizer_->scale_loss(mul(micro_loss_tensor, weight / ranks)).backward();
    optimizer_->unscale_gradients();
  }
  result.stepped = optimizer_->step();
  rollback.keep();
  ++steps_;
  return result;
}

TensorMap model_entries(const TensorMap& trainer_state) {
  TensorMap model;
  for (const auto& [name, tensor] : trainer_state)
    if (name.rfind("optimizer.", 0) != 0 && name.rfind("trainer.", 0) != 0) model.emplace(name, tensor);
  return model;
}

NamedTensors Trainer::state_dict() const {
  NamedTensors state = model_->state_dict();
  optim::append_part(state, "optimizer.", optimizer_->state_dict());
  state.emplace_back("trainer.steps", optim::state_count(steps_));
  return state;
}

void Trainer::load_state_dict(const TensorMap& state, const std::string& source) {
  optim::StateDictReader reader(state, "Trainer (" + source + ")");
  const TensorMap optimizer = reader.part("optimizer.");
  const TensorMap trainer = reader.part("trainer.");
  model_->load_state_dict(model_entries(state), source);
  optimizer_->load_state_dict(optimizer);
  optim::StateDictReader counters(trainer, "Trainer (" + source + ")");
  steps_ = counters.count("steps", 0);
  counters.finish();
}

}  // namespace ember::train
