#pragma once
// train::StepOptimizer: the optimizer a training step drives, whatever the precision. One
// interface over a plain optimizer of the model's parameters (fp32) and MixedPrecisionOptimizer
// (f16 parameters, fp32 masters, dynamic loss scaling), so a step is written once:
//
//   std::unique_ptr<StepOptimizer> opt = make_step_optimizer(Precision::fp16, model->parameters(), factory);
//   opt->zero_grad();
//   for (micro-batch) { opt->begin_backward(last); opt->scale_loss(loss).backward(); opt->unscale_gradients(); }
//   bool stepped = opt->step();      // false: fp16 met an inf/NaN gradient and skipped the update
//   schedule.apply(opt->inner(), k); // the optimizer whose learning rate a schedule sets
//
// Under fp32 scale_loss is the loss itself, unscale_gradients does nothing and step always steps.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/named_tensors.h"
#include "core/tensor.h"
#include "optim/grad_scaler.h"
#include "optim/optimizer.h"
#include "train/data_parallel.h"

namespace ember::train {

enum class Precision { fp32, fp16 };
Precision parse_precision(const std::string& text, const char* what = "precision");  // "fp32" | "fp16"
const char* precision_name(Precision precision);

// Builds an optimizer over the parameters it is given (the model's, or the fp32 masters).
using OptimizerFactory = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor> params)>;

// make_optimizer(params), refused unless the optimizer steps exactly the tensors it was given:
// a factory that captures the model and builds over model->parameters() would, under fp16 or
// ZeRO (which give it fp32 masters or this rank's shards), step tensors nothing reads. `who`
// names the caller in the error.
std::unique_ptr<optim::Optimizer> make_checked_optimizer(const OptimizerFactory& make_optimizer,
                                                         const std::vector<Tensor>& params, const char* who);

class StepOptimizer {
 public:
  virtual ~StepOptimizer() = default;
  // Drops the gradients gathered since the last step.
  virtual void zero_grad() = 0;
  // What backward() runs from: the loss times the loss scale (fp32: the loss).
  virtual Tensor scale_loss(const Tensor& loss) const = 0;
  // Before each backward; `last_micro_batch`: the step's last one (data parallel: the
  // gradients travel then). Nothing to do in one process.
  virtual void begin_backward(bool /*last_micro_batch*/) {}
  // After each backward: takes the gradients in (fp16: unscaled into the fp32 masters' gradients).
  virtual void unscale_gradients() = 0;
  // One update from the gathered gradients; false when it was skipped (fp16: an inf/NaN gradient).
  virtual bool step() = 0;
  // The optimizer that updates the weights: the one a learning-rate schedule sets.
  virtual optim::Optimizer& inner() = 0;
  virtual double loss_scale() const = 0;    // 1 in fp32
  virtual int64_t skipped_steps() const = 0;  // 0 in fp32
  // True when an inf/NaN loss is expected and handled by skipping the step (fp16's loss scaling).
  virtual bool skips_nonfinite_steps() const = 0;
  virtual NamedTensors state_dict() const = 0;
  virtual void load_state_dict(const TensorMap& state) = 0;
};

// An fp32 StepOptimizer over params, or (fp16) a MixedPrecisionOptimizer whose inner optimizer
// steps fp32 masters of params (the parameters must already be f16: Module::parameters_to); with
// a data-parallel group, a DataParallelOptimizer (train/data_parallel_optimizer.h) of either.
std::unique_ptr<StepOptimizer> make_step_optimizer(Precision precision, std::vector<Tensor> params,
                                                   const OptimizerFactory& make_optimizer,
                                                   const optim::GradScalerOptions& scaler = {},
                                                   const DataParallelOptions& data_parallel = {});

}  // namespace ember::train
