#pragma once
// train::MixedPrecisionOptimizer: fp16 compute with fp32 master weights and dynamic
// loss scaling, around any optimizer. It is the one owner of the masters:
//
//   model params (f16)  --forward/backward-->  f16 gradients (of loss * scale)
//   unscale_gradients(): master.grad (f32) += grad / scale, inf/NaN flagged; f16 grads dropped
//   step(): skipped if flagged, else the inner optimizer steps the f32 masters (so its
//           state is f32 too) and the masters are copied out to the f16 params
//
//   model->parameters_to(ember::DType::f16);          // BatchNorm statistics stay fp32
//   ember::train::MixedPrecisionOptimizer opt(model->parameters(), [](std::vector<ember::Tensor> masters) {
//     return std::make_unique<ember::optim::SGD>(std::move(masters), ember::optim::SgdOptions(0.05));
//   });
//   Tensor loss = cross_entropy(model->forward(x.to(ember::DType::f16)), y);   // the loss is f32
//   opt.scale_loss(loss).backward();
//   opt.unscale_gradients();      // after every backward: micro-batches add up in fp32
//   bool stepped = opt.step();    // false: an inf/NaN was found, nothing changed, the scale halved
//
// Memory categories: masters are `master_weights`, their gradients `gradient`, the inner
// optimizer's state `optimizer_state` (all fp32); the f16 params stay `parameter`.
// It is the fp16 StepOptimizer (train/step_optimizer.h) the Trainer drives.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "optim/grad_scaler.h"
#include "optim/optimizer.h"
#include "train/step_optimizer.h"

namespace ember::train {

class MixedPrecisionOptimizer final : public StepOptimizer {
 public:
  // params: the model's parameters (any floating dtype, usually f16), leaves on one device.
  MixedPrecisionOptimizer(std::vector<Tensor> params, const OptimizerFactory& make_inner,
                          const optim::GradScalerOptions& scaler = {});
  MixedPrecisionOptimizer(const MixedPrecisionOptimizer&) = delete;
  MixedPrecisionOptimizer& operator=(const MixedPrecisionOptimizer&) = delete;

  // loss * the current scale; backward() of this fills the params' (scaled) gradients.
  Tensor scale_loss(const Tensor& loss) const override { return scaler_.scale_loss(loss); }
  // Adds every param gradient / scale into its master's fp32 gradient (one fused kernel per
  // parameter, which also flags inf/NaN) and drops the param gradients. Call after each backward.
  void unscale_gradients() override;
  // One update from the gradients gathered since the last step. Returns false, leaving weights and
  // optimizer state untouched, when any gathered gradient was inf or NaN. Updates the loss scale
  // and clears the gathered gradients either way.
  bool step() override;
  // Drops the gathered master gradients, the params' gradients and the inf/NaN flag.
  void zero_grad() override;

  const std::vector<Tensor>& parameters() const { return params_; }
  const std::vector<Tensor>& masters() const { return masters_; }  // f32, same order as parameters()
  optim::Optimizer& inner() override { return *inner_; }
  const optim::GradScaler& scaler() const { return scaler_; }
  double loss_scale() const override { return scaler_.scale(); }
  int64_t skipped_steps() const override { return scaler_.skipped_steps(); }
  bool skips_nonfinite_steps() const override { return true; }
  bool found_inf() const;  // reads the flag (a device sync on CUDA)

  // "master.<i>" (the fp32 masters), "inner.<...>" (the inner optimizer's state_dict) and
  // "scaler.<...>". Loading copies the masters in place and out to the parameters.
  NamedTensors state_dict() const override;
  void load_state_dict(const TensorMap& state) override;

 private:
  std::vector<Tensor> params_;   // the model's, e.g. f16
  std::vector<Tensor> masters_;  // f32 copies: what the inner optimizer updates
  std::unique_ptr<optim::Optimizer> inner_;
  optim::GradScaler scaler_;
  Tensor found_inf_;  // f32 [1] on the params' device: 1 once any unscaled gradient is inf/NaN
};

}  // namespace ember::train
