#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/error.h"
#include "core/row_view.h"
#include "memory/allocation_observer.h"
#include "memory/scopes.h"
#include "memory/out_of_memory.h"
#include "models/metrics.h"
#include "models/sequential.h"
#include "optim/state_dict.h"
#include "train/buffer_rollback.h"
#include "train/checkpoint_sequential.h"

namespace ember::train {

Precision parse_precision(const std::string& text, const char* what) {
  if (text == "fp32") return Precision::fp32;
  if (text == "fp16") return Precision::fp16;
  EMBER_THROW(what << ": unknown precision '" << text << "'; expected fp32 or fp16");
}

const char* precision_name(Precision precision) { return precision == Precision::fp16 ? "fp16" : "fp32"; }

Trainer::Trainer(std::shared_ptr<nn::Module> model, const OptimizerFactory& make_optimizer,
                 const TrainerOptions& options)
    : model_(std::move(model)), options_(options) {
  EMBER_CHECK(model_ != nullptr, "Trainer: the model is null");
  EMBER_CHECK(options_.accum >= 1, "Trainer: accum (micro-batches per step) must be at least 1, got " << options_.accum);
  if (options_.checkpoint.enabled()) {
    auto* seq = dynamic_cast<nn::Sequential*>(model_.get());
    EMBER_CHECK(seq != nullptr, "Trainer: checkpointing splits an nn::Sequential into segments, but the model is a "
                                    << model_->name() << "; wrap its layers in a Sequential or call train::checkpoint "
                                                         "inside its forward");
    segments_ = options_.checkpoint.segments_for(static_cast<int64_t>(seq->size()));
  }
  if (options_.precision == Precision::fp16) {
    model_->parameters_to(DType::f16);
    fp16_optimizer_ = std::make_unique<MixedPrecisionOptimizer>(model_->parameters(), make_optimizer, options_.scaler);
  } else {
    fp32_optimizer_ = make_optimizer(model_->parameters());
    EMBER_CHECK(fp32_optimizer_ != nullptr, "Trainer: the optimizer factory returned null");
  }
}

optim::Optimizer& Trainer::optimizer() { return fp16_optimizer_ ? fp16_optimizer_->inner() : *fp32_optimizer_; }
double Trainer::loss_scale() const { return fp16_optimizer_ ? fp16_optimizer_->scale() : 1.0; }
int64_t Trainer::skipped_steps() const { return fp16_optimizer_ ? fp16_optimizer_->scaler().skipped_steps() : 0; }

Tensor Trainer::forward(const Tensor& images) {
  Tensor x = images;
  if (options_.precision == Precision::fp16 && x.dtype() != DType::f16) {
    CategoryScope scope(MemoryCategory::data);  // the input batch, in the compute dtype
    x = to_dtype(images, DType::f16);
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

Tensor Trainer::predict(const Tensor& images) {
  NoGradGuard no_grad;
  return forward(images);
}

std::string Trainer::what_is_left(int64_t micro_batch) const {
  std::ostringstream os;
  os << "This step ran with --precision " << precision_name(options_.precision) << " --checkpoint "
     << options_.checkpoint.str() << " --accum " << options_.accum << " (micro-batch " << micro_batch
     << "); still to try:";
  const size_t before = os.str().size();
  if (options_.precision == Precision::fp32) os << " --precision fp16";
  if (segments_ == 0) os << " --checkpoint sqrt";
  if (micro_batch > 1) os << " --accum " << options_.accum * 2 << " (micro-batch " << (micro_batch + 1) / 2 << ")";
  if (os.str().size() == before) os << " a smaller model or a larger memory budget";
  os << ".";
  return os.str();
}

StepResult Trainer::step(const Tensor& images, const Tensor& labels) {
  try {
    return run_step(images, labels);
  } catch (const OutOfMemoryError& e) {
    const int64_t micro_batch = (images.size(0) + options_.accum - 1) / options_.accum;
    const std::string advice = out_of_memory_advice_ ? out_of_memory_advice_(micro_batch) : what_is_left(micro_batch);
    throw OutOfMemoryError(std::string(e.what()) + "\n" + advice, e.requested_bytes());
  }
}

StepResult Trainer::run_step(const Tensor& images, const Tensor& labels) {
  EMBER_CHECK(images.defined() && labels.defined() && images.dim() >= 1 && labels.dim() == 1 &&
                  images.size(0) == labels.size(0),
              "Trainer::step: images " << images.str() << " and labels " << labels.str()
                                       << " must hold the same number of samples along dim 0");
  const int64_t batch = images.size(0);
  EMBER_CHECK(batch > 0, "Trainer::step: empty batch " << images.shape());
  const int64_t micro_batches = std::min(options_.accum, batch);
  StepResult result;
  result.loss_scale = loss_scale();
  BufferRollback rollback(*model_);  // forward updates the running statistics; a failed step puts them back

  if (fp16_optimizer_) fp16_optimizer_->zero_grad();
  else fp32_optimizer_->zero_grad();
  for (int64_t m = 0, begin = 0; m < micro_batches; ++m) {
    const int64_t count = batch / micro_batches + (m < batch % micro_batches ? 1 : 0);
    const Tensor x = row_view(images, begin, count), y = row_view(labels, begin, count);
    begin += count;
    const Tensor logits = forward(x);
    Tensor loss = cross_entropy(logits, y);  // f32 also under fp16
    result.correct += models::count_correct(logits.detach(), y);
    // Each micro-batch's mean loss weighted by its share of the batch: the sum is the batch mean.
    const double weight = static_cast<double>(count) / static_cast<double>(batch);
    const double micro_loss = loss.item<double>();
    // Under fp16 the loss scaler owns this case: the gradients are inf/NaN too and the step is skipped.
    EMBER_CHECK(fp16_optimizer_ || std::isfinite(micro_loss),
                "Trainer::step: the loss of step " << steps_ + 1 << " is "
                    << (std::isnan(micro_loss) ? "nan" : micro_loss > 0 ? "inf" : "-inf") << " (micro-batch " << m + 1
                    << " of " << micro_batches << "); training stopped before this step's update, so the weights "
                       "are those after step " << steps_ << ". Lower the learning rate, or find the first op "
                       "whose output is not finite with anomaly detection (ember train --detect-anomaly)");
    result.loss += micro_loss * weight;
    Tensor objective = mul(loss, weight);
    if (fp16_optimizer_) objective = fp16_optimizer_->scale_loss(objective);
    objective.backward();
    if (fp16_optimizer_) fp16_optimizer_->unscale_gradients();
  }
  if (fp16_optimizer_) result.stepped = fp16_optimizer_->step();
  else fp32_optimizer_->step();
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
  optim::append_part(state, "optimizer.", fp16_optimizer_ ? fp16_optimizer_->state_dict() : fp32_optimizer_->state_dict());
  state.emplace_back("trainer.steps", optim::state_count(steps_));
  return state;
}

void Trainer::load_state_dict(const TensorMap& state, const std::string& source) {
  optim::StateDictReader reader(state, "Trainer (" + source + ")");
  const TensorMap optimizer = reader.part("optimizer.");
  const TensorMap trainer = reader.part("trainer.");
  model_->load_state_dict(model_entries(state), source);
  if (fp16_optimizer_) fp16_optimizer_->load_state_dict(optimizer);
  else fp32_optimizer_->load_state_dict(optimizer);
  optim::StateDictReader counters(trainer, "Trainer (" + source + ")");
  steps_ = counters.count("steps", 0);
  counters.finish();
}

}  // namespace ember::train
