#include "train/step_optimizer.h"

#include <unordered_set>

#include "core/error.h"
#include "train/data_parallel_optimizer.h"
#include "train/mixed_precision_optimizer.h"

namespace ember::train {

Precision parse_precision(const std::string& text, const char* what) {
  if (text == "fp32") return Precision::fp32;
  if (text == "fp16") return Precision::fp16;
  EMBER_THROW(what << ": unknown precision '" << text << "'; expected fp32 or fp16");
}

const char* precision_name(Precision precision) { return precision == Precision::fp16 ? "fp16" : "fp32"; }

std::unique_ptr<optim::Optimizer> make_checked_optimizer(const OptimizerFactory& make_optimizer,
                                                         const std::vector<Tensor>& params, const char* who) {
  std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(params);
  EMBER_CHECK(optimizer != nullptr, who << ": the optimizer factory returned null");
  std::unordered_set<const TensorImpl*> given;
  for (const Tensor& p : params) given.insert(p.impl());
  size_t foreign = 0;
  for (const Tensor& p : optimizer->parameters()) foreign += given.count(p.impl()) == 0 ? 1 : 0;
  EMBER_CHECK(foreign == 0 && optimizer->parameters().size() == params.size(),
              who << ": the optimizer factory was given " << params.size() << " tensors and returned an optimizer over "
                  << optimizer->parameters().size() << ", " << foreign
                  << " of them not among those given; it must build over the tensors it is given (the fp32 masters "
                     "under fp16, this rank's shards under ZeRO), not over the model's parameters");
  return optimizer;
}

namespace {

// fp32: the optimizer steps the model's own parameters, with nothing to scale.
class Fp32StepOptimizer final : public StepOptimizer {
 public:
  explicit Fp32StepOptimizer(std::unique_ptr<optim::Optimizer> inner) : inner_(std::move(inner)) {}
  void zero_grad() override { inner_->zero_grad(); }
  Tensor scale_loss(const Tensor& loss) const override { return loss; }
  void unscale_gradients() override {}
  bool step() override {
    inner_->step();
    return true;
  }
  optim::Optimizer& inner() override { return *inner_; }
  double loss_scale() const override { return 1.0; }
  int64_t skipped_steps() const override { return 0; }
  bool skips_nonfinite_steps() const override { return false; }
  NamedTensors state_dict() const override { return inner_->state_dict(); }
  void load_state_dict(const TensorMap& state) override { inner_->load_state_dict(state); }

 private:
  std::unique_ptr<optim::Optimizer> inner_;
};

}  // namespace

std::unique_ptr<StepOptimizer> make_step_optimizer(Precision precision, std::vector<Tensor> params,
                                                   const OptimizerFactory& make_optimizer,
                                                   const optim::GradScalerOptions& scaler,
                                                   const DataParallelOptions& data_parallel) {
  if (data_parallel.enabled())
    return std::make_unique<DataParallelOptimizer>(std::move(params), precision, make_optimizer, data_parallel, scaler);
  if (precision == Precision::fp16) return std::make_unique<MixedPrecisionOptimizer>(std::move(params), make_optimizer, scaler);
  return std::make_unique<Fp32StepOptimizer>(make_checked_optimizer(make_optimizer, params, "StepOptimizer"));
}

}  // namespace ember::train
