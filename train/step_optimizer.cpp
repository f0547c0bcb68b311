#include "train/step_optimizer.h"

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

namespace {

// fp32: the optimizer steps the model's own parameters, with nothing to scale.
class Fp32StepOptimizer final : public StepOptimizer {
 public:
  explicit Fp32StepOptimizer(std::unique_ptr<optim::Optimizer> inner) : inner_(std::move(inner)) {
    EMBER_CHECK(inner_ != nullptr, "StepOptimizer: the optimizer factory returned null");
  }
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
  return std::make_unique<Fp32StepOptimizer>(make_optimizer(std::move(params)));
}

}  // namespace ember::train
