#pragma once
// train::DataParallelOptimizer: the StepOptimizer (train/step_optimizer.h) of a data-parallel
// Trainer (train/data_parallel.h), fp32 or fp16, ZeRO stage 0, 1 or 2. The Trainer drives it
// as any other; what happens underneath:
//
//   begin_backward(last)   backward's hooks take each parameter's gradient into its fp32
//                          bucket (fp32: the gradients are views of the buckets, as PyTorch's
//                          gradient_as_bucket_view; fp16: unscaled into them, inf/NaN flagged,
//                          and dropped); a full bucket is sent: all_reduce_async (ZeRO 0, 1:
//                          last micro-batch only) or reduce_scatter (ZeRO 2: every micro-batch)
//   unscale_gradients()    after backward: sends what is left (unused parameters add 0)
//   step()                 waits for the sends; fp16: the ranks agree on inf/NaN (all_reduce);
//                          the inner optimizer steps what this rank owns:
//                            fp32, ZeRO 0: the model's parameters, the buckets as their .grad
//                            otherwise:    fp32 masters, one flat tensor per bucket (the whole
//                                          bucket under ZeRO 0, this rank's shard under 1, 2)
//                          then the masters go out to the parameters (ZeRO 1, 2: all_gather)
//
// Memory categories: buckets and shards of gradients `gradient`, masters `master_weights`, the
// inner optimizer's state `optimizer_state`, the all_gather's staging buffer `temporary`.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "dist/process_group.h"
#include "optim/grad_scaler.h"
#include "optim/optimizer.h"
#include "train/data_parallel.h"
#include "train/gradient_buckets.h"
#include "train/step_optimizer.h"

namespace ember::train {

class DataParallelOptimizer final : public StepOptimizer {
 public:
  // params: the model's (f32, or f16 under fp16), leaves on one device, the same on every rank.
  DataParallelOptimizer(std::vector<Tensor> params, Precision precision, const OptimizerFactory& make_inner,
                        const DataParallelOptions& options, const optim::GradScalerOptions& scaler = {});
  ~DataParallelOptimizer() override;  // takes its hooks off the parameters
  DataParallelOptimizer(const DataParallelOptimizer&) = delete;
  DataParallelOptimizer& operator=(const DataParallelOptimizer&) = delete;

  void zero_grad() override;
  Tensor scale_loss(const Tensor& loss) const override;
  void begin_backward(bool last_micro_batch) override;
  void unscale_gradients() override;
  bool step() override;
  optim::Optimizer& inner() override { return *inner_; }
  double loss_scale() const override { return fp16_ ? scaler_.scale() : 1.0; }
  int64_t skipped_steps() const override { return scaler_.skipped_steps(); }
  bool skips_nonfinite_steps() const override { return fp16_; }
  // "inner.<...>"; with masters "master.<bucket>" (this rank's); fp16 "scaler.<...>".
  NamedTensors state_dict() const override;
  void load_state_dict(const TensorMap& state) override;

  const std::vector<GradientBucket>& buckets() const { return layout_; }

 private:
  struct BucketState {
    Tensor grad;         // fp32 [numel]: this step's (ZeRO 2: this micro-batch's) gradients
    Tensor grad_shard;   // ZeRO 2: fp32 [numel / ranks], the reduced gradients of the step so far
    Tensor master;       // fp32: the part this rank steps (undefined when the parameters are stepped)
    std::unique_ptr<dist::Work> sending;
    std::vector<bool> ready;  // per slot, this backward
    int64_t waiting = 0;      // slots not ready yet
  };

  void on_gradient_ready(size_t param);
  bool sent(size_t b) const;  // bucket b went out in this backward
  Tensor bucket_grad(size_t b);
  Tensor slot_view(size_t b, const BucketSlot& slot) const;
  void send_ready_buckets(bool all);
  void send(size_t b);
  void attach_gradients();
  void copy_masters_out();
  int64_t owned_begin(size_t b) const;
  int64_t owned_numel(size_t b) const;

  std::vector<Tensor> params_;
  std::vector<std::pair<size_t, size_t>> where_;  // param -> (bucket, slot)
  std::vector<GradientBucket> layout_;
  std::vector<BucketState> buckets_;
  dist::ProcessGroup& group_;
  int zero_;
  bool overlap_;
  bool fp16_;
  bool steps_params_;  // fp32, ZeRO 0: no masters
  std::unique_ptr<optim::Optimizer> inner_;
  optim::GradScaler scaler_;
  Tensor found_inf_;  // f32 [1]: 1 once an unscaled gradient was inf/NaN
  bool collecting_ = false;
  bool last_micro_batch_ = true;
  size_t next_to_send_ = 0;
};

}  // namespace ember::train
