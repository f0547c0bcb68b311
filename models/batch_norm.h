#pragma once
// nn::BatchNorm2d: batch normalisation over the channels of NCHW inputs.
//
//   auto bn = std::make_shared<ember::nn::BatchNorm2d>(32);   // after a Conv2d with 32 outputs
//   model->train();  y = bn->forward(x);   // batch statistics; running ones updated (momentum 0.1)
//   model->eval();   y = bn->forward(x);   // running statistics
//   y = bn->forward_relu(x);                 // relu(bn->forward(x)) in one pass (batch_norm_relu);
//                                            // nn::Sequential runs a BatchNorm2d and a ReLU after it so
//   y = bn->forward_add_relu(x, shortcut);   // relu(bn->forward(x) + shortcut): a residual block's end
//
// Parameters weight = 1 and bias = 0 [C] (affine); buffers running_mean = 0 and
// running_var = 1 [C] (track_running_stats), PyTorch's defaults. Without running
// statistics the batch statistics are used in eval too. Running statistics are
// not updated while checkpointing recomputes a segment (autograd/recompute_state.h).
// PyTorch's num_batches_tracked is left out: it only serves momentum=None, and
// counting would cost a device sync per layer and step on CUDA.
#include <cstdint>

#include "models/module.h"

namespace ember::nn {

struct BatchNorm2dOptions {
  explicit BatchNorm2dOptions(int64_t num_features) : num_features_(num_features) {}
  BatchNorm2dOptions& eps(double e) { eps_ = e; return *this; }
  BatchNorm2dOptions& momentum(double m) { momentum_ = m; return *this; }
  BatchNorm2dOptions& affine(bool on) { affine_ = on; return *this; }
  BatchNorm2dOptions& track_running_stats(bool on) { track_running_stats_ = on; return *this; }
  int64_t num_features_;
  double eps_ = 1e-5;
  double momentum_ = 0.1;
  bool affine_ = true;
  bool track_running_stats_ = true;
};

class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(const BatchNorm2dOptions& options);
  explicit BatchNorm2d(int64_t num_features) : BatchNorm2d(BatchNorm2dOptions(num_features)) {}
  const char* name() const override { return "BatchNorm2d"; }

  const Tensor& weight() const { return weight_; }              // undefined without affine
  const Tensor& bias() const { return bias_; }                  // undefined without affine
  const Tensor& running_mean() const { return running_mean_; }  // undefined without tracking
  const Tensor& running_var() const { return running_var_; }    // undefined without tracking
  const BatchNorm2dOptions& options() const { return options_; }
  // relu(forward(x)), fused (autograd/ops.h: batch_norm_relu): the same values, bit for bit.
  Tensor forward_relu(const Tensor& x);
  // relu(forward(x) + residual), a residual block's end, fused (batch_norm_add_relu): the same
  // values, bit for bit.
  Tensor forward_add_relu(const Tensor& x, const Tensor& residual);

 protected:
  Tensor forward_impl(const Tensor& x) override;
  std::string extra_str() const override;

 private:
  Tensor run(const Tensor& x, bool relu, const Tensor& residual);

  BatchNorm2dOptions options_;
  Tensor weight_, bias_;               // [C]
  Tensor running_mean_, running_var_;  // [C]
};

}  // namespace ember::nn
