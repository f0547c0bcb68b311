#include "train/data_parallel_optimizer.h"

#include <algorithm>
#include <string>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "core/row_view.h"
#include "kernels/factories.h"
#include "kernels/ops.h"
#include "memory/empty.h"
#include "memory/scopes.h"
#include "optim/state_dict.h"

namespace ember::train {

namespace {

Tensor flat(const Tensor& t) { return t.detach().reshape({t.numel()}); }

}  // namespace

DataParallelOptimizer::DataParallelOptimizer(std::vector<Tensor> params, Precision precision,
                                             const OptimizerFactory& make_inner, const DataParallelOptions& options,
                                             const optim::GradScalerOptions& scaler)
    : params_(std::move(params)),
      group_(*options.group),
      zero_(options.zero),
      overlap_(options.overlap),
      fp16_(precision == Precision::fp16),
      steps_params_(precision == Precision::fp32 && options.zero == 0),
      scaler_(scaler) {
  options.check();
  EMBER_CHECK(options.enabled(), "DataParallelOptimizer: no process group");
  EMBER_CHECK(!params_.empty(), "DataParallelOptimizer: no parameters");
  const Device device = params_.front().device();
  const DType dtype = params_.front().dtype();
  std::vector<int64_t> numels;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    EMBER_CHECK(p.defined() && p.is_leaf() && is_floating(p.dtype()),
                "DataParallelOptimizer: parameter " << i << " must be a floating leaf tensor, got " << p.str());
    EMBER_CHECK(p.device() == device && p.dtype() == dtype,
                "DataParallelOptimizer: parameter " << i << " is " << p.str() << ", parameter 0 "
                                                    << params_.front().str() << ": the buckets need one device and dtype");
    numels.push_back(p.numel());
  }
  layout_ = plan_gradient_buckets(numels, options.bucket_bytes, zero_ == 0 ? 1 : group_.size());
  buckets_.resize(layout_.size());
  where_.resize(params_.size());
  for (size_t b = 0; b < layout_.size(); ++b)
    for (size_t s = 0; s < layout_[b].slots.size(); ++s) where_[layout_[b].slots[s].param] = {b, s};

  NoGradGuard no_grad;
  if (steps_params_) {
    inner_ = make_checked_optimizer(make_inner, params_, "DataParallelOptimizer");
  } else {
    std::vector<Tensor> masters;
    CategoryScope scope(MemoryCategory::master_weights);
    for (size_t b = 0; b < layout_.size(); ++b) {
      const int64_t begin = owned_begin(b), end = begin + owned_numel(b);
      Tensor master = zeros({owned_numel(b)}, TensorOptions().dtype(DType::f32).device(device));  // padding: 0
      for (const BucketSlot& slot : layout_[b].slots) {
        const int64_t from = std::max(begin, slot.offset), to = std::min(end, slot.offset + slot.numel);
        if (from < to)
          kernels::copy_(row_view(master, from - begin, to - from),
                         row_view(flat(params_[slot.param]), from - slot.offset, to - from));
      }
      buckets_[b].master = master.requires_grad_(true);
      masters.push_back(master);
    }
    inner_ = make_checked_optimizer(make_inner, masters, "DataParallelOptimizer");
  }
  {
    CategoryScope scope(MemoryCategory::optimizer_state);
    found_inf_ = zeros({1}, TensorOptions().dtype(DType::f32).device(device));
  }
  for (size_t i = 0; i < params_.size(); ++i)
    params_[i].set_post_accumulate_grad_hook([this, i](const Tensor&) { on_gradient_ready(i); });
}

DataParallelOptimizer::~DataParallelOptimizer() {
  for (const Tensor& p : params_) p.set_post_accumulate_grad_hook(nullptr);
}

int64_t DataParallelOptimizer::owned_begin(size_t b) const {
  return zero_ == 0 ? 0 : group_.rank() * owned_numel(b);
}

int64_t DataParallelOptimizer::owned_numel(size_t b) const {
  return zero_ == 0 ? layout_[b].numel : layout_[b].shard_numel(group_.size());
}

Tensor DataParallelOptimizer::scale_loss(const Tensor& loss) const { return fp16_ ? scaler_.scale_loss(loss) : loss; }

void DataParallelOptimizer::begin_backward(bool last_micro_batch) {
  collecting_ = true;
  last_micro_batch_ = last_micro_batch;
  next_to_send_ = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    buckets_[b].ready.assign(layout_[b].slots.size(), false);
    buckets_[b].waiting = static_cast<int64_t>(layout_[b].slots.size());
  }
  if (!fp16_) bucket_grad(0);  // backward's first gradients land in it
}

bool DataParallelOptimizer::sent(size_t b) const { return (last_micro_batch_ || zero_ == 2) && b < next_to_send_; }

Tensor DataParallelOptimizer::bucket_grad(size_t b) {
  BucketState& bucket = buckets_[b];
  if (!bucket.grad.defined()) {
    CategoryScope scope(MemoryCategory::gradient);
    bucket.grad = zeros({layout_[b].numel}, TensorOptions().dtype(DType::f32).device(params_.front().device()));
    // fp32: the parameters' gradients become views of the bucket (PyTorch DDP's
    // gradient_as_bucket_view), so backward adds into the bucket and nothing is copied twice.
    if (!fp16_)
      for (const BucketSlot& slot : layout_[b].slots)
        if (!params_[slot.param].grad().defined()) params_[slot.param].set_grad(slot_view(b, slot));
  }
  return bucket.grad;
}

Tensor DataParallelOptimizer::slot_view(size_t b, const BucketSlot& slot) const {
  return row_view(buckets_[b].grad, slot.offset, slot.numel).reshape(params_[slot.param].shape());
}

// A parameter's gradient of this backward is whole: into its bucket (fp16: unscaled, and the
// f16 gradient dropped; fp32: it is there already, but for the parameter whose gradient made
// the bucket), and the bucket goes out once it is full and those before it have gone.
void DataParallelOptimizer::on_gradient_ready(size_t param) {
  if (!collecting_) return;  // a backward the Trainer did not start: the gradient stays in .grad
  NoGradGuard no_grad;
  const auto [b, s] = where_[param];
  BucketState& bucket = buckets_[b];
  EMBER_CHECK(!sent(b),
              "data parallel: parameter " << param << " received a gradient after its bucket " << b
                                          << " was sent in this backward (a parameter used again after backward "
                                             "passed it, e.g. by a second backward through the same graph)");
  const Tensor p = params_[param];
  const Tensor grad = p.grad();
  const BucketSlot& slot = layout_[b].slots[s];
  bucket_grad(b);
  // fp32: the next bucket in backward's order is made now, so that its parameters' gradients
  // are views of it from the start (made when its first gradient came, that gradient would be
  // allocated by backward and then copied: twice the bytes for a moment).
  if (!fp16_ && b + 1 < buckets_.size() && !sent(b + 1)) bucket_grad(b + 1);
  const Tensor view = slot_view(b, slot);
  if (grad.data_ptr() != view.data_ptr()) {
    kernels::unscale_grad_(view, grad, fp16_ ? 1.0 / scaler_.scale() : 1.0, /*accumulate=*/true, found_inf_);
    if (fp16_) p.zero_grad();  // taken in: free it now
    else p.set_grad(view);
  }
  if (!bucket.ready[s]) {
    bucket.ready[s] = true;
    --bucket.waiting;
  }
  send_ready_buckets(false);
}

void DataParallelOptimizer::send_ready_buckets(bool all) {
  if (!(last_micro_batch_ || zero_ == 2)) return;  // accumulating: nothing travels until the last micro-batch
  if (!all && !overlap_) return;
  while (next_to_send_ < buckets_.size() && (all || buckets_[next_to_send_].waiting == 0)) send(next_to_send_++);
}

void DataParallelOptimizer::send(size_t b) {
  BucketState& bucket = buckets_[b];
  const Tensor grad = bucket_grad(b);  // a bucket no gradient reached sends zeros
  if (zero_ < 2) {
    bucket.sending = group_.all_reduce_async(grad, dist::ReduceOp::sum);
    return;
  }
  const Tensor mine = row_view(grad, owned_begin(b), owned_numel(b));
  group_.reduce_scatter(grad, mine, dist::ReduceOp::sum);
  if (bucket.grad_shard.defined()) {
    kernels::add_(bucket.grad_shard, mine, 1.0);
  } else {
    CategoryScope scope(MemoryCategory::gradient);
    bucket.grad_shard = empty({owned_numel(b)}, TensorOptions().dtype(DType::f32).device(grad.device()));
    kernels::copy_(bucket.grad_shard, mine);
  }
  bucket.grad = Tensor();  // the other ranks' chunks are theirs: free the bucket (and the views of it)
  if (!fp16_)
    for (const BucketSlot& slot : layout_[b].slots) params_[slot.param].zero_grad();
}

void DataParallelOptimizer::unscale_gradients() {
  if (!collecting_) return;
  send_ready_buckets(true);
  collecting_ = false;
}

void DataParallelOptimizer::attach_gradients() {
  for (size_t b = 0; b < buckets_.size(); ++b) {
    BucketState& bucket = buckets_[b];
    if (!bucket.grad.defined() && !bucket.grad_shard.defined()) continue;  // no backward since zero_grad: no update
    if (steps_params_) {
      for (const BucketSlot& slot : layout_[b].slots)
        params_[slot.param].set_grad(row_view(bucket.grad, slot.offset, slot.numel).reshape(params_[slot.param].shape()));
    } else {
      bucket.master.set_grad(zero_ == 2 ? bucket.grad_shard : row_view(bucket.grad, owned_begin(b), owned_numel(b)));
    }
  }
}

// The updated masters into the parameters: directly under ZeRO 0, where each rank stepped the
// whole bucket; under ZeRO 1 and 2 each rank's shard first travels to every rank.
void DataParallelOptimizer::copy_masters_out() {
  const DType dtype = params_.front().dtype();
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Tensor whole = buckets_[b].master.detach();
    if (zero_ > 0) {
      CategoryScope scope(MemoryCategory::temporary);
      Tensor gathered = empty({layout_[b].numel}, TensorOptions().dtype(dtype).device(whole.device()));
      const Tensor mine = row_view(gathered, owned_begin(b), owned_numel(b));
      kernels::copy_(mine, whole);
      group_.all_gather(mine, gathered);
      whole = gathered;
    }
    for (const BucketSlot& slot : layout_[b].slots) {
      const Tensor& p = params_[slot.param];
      kernels::copy_(p.detach(), row_view(whole, slot.offset, slot.numel).reshape(p.shape()));
    }
  }
}

bool DataParallelOptimizer::step() {
  NoGradGuard no_grad;
  for (BucketState& bucket : buckets_) {
    if (bucket.sending) bucket.sending->wait();
    bucket.sending.reset();
  }
  bool skip = false;
  if (fp16_) {
    group_.all_reduce(found_inf_, dist::ReduceOp::sum);  // every rank skips, or none
    skip = found_inf_.item<float>() != 0.0f;
  }
  if (!skip) {
    attach_gradients();
    inner_->step();
    if (!steps_params_) {
      CategoryScope scope(MemoryCategory::parameter);
      copy_masters_out();
    }
  }
  if (fp16_) scaler_.update(skip);
  zero_grad();
  return !skip;
}

void DataParallelOptimizer::zero_grad() {
  inner_->zero_grad();
  for (const Tensor& p : params_) p.zero_grad();
  for (BucketState& bucket : buckets_) {
    if (bucket.sending) bucket.sending->wait();  // never free a buffer the engine still writes
    bucket.sending.reset();
    bucket.grad = Tensor();
    bucket.grad_shard = Tensor();
  }
  kernels::fill_(found_inf_, 0.0);
  collecting_ = false;
}

NamedTensors DataParallelOptimizer::state_dict() const {
  NamedTensors state;
  optim::append_part(state, "inner.", inner_->state_dict());
  if (!steps_params_)
    for (size_t b = 0; b < buckets_.size(); ++b) state.emplace_back("master." + std::to_string(b), buckets_[b].master);
  if (fp16_) optim::append_part(state, "scaler.", scaler_.state_dict());
  return state;
}

void DataParallelOptimizer::load_state_dict(const TensorMap& state) {
  NoGradGuard no_grad;
  optim::StateDictReader reader(state, "DataParallelOptimizer");
  std::vector<Tensor> masters;
  if (!steps_params_) {
    for (size_t b = 0; b < buckets_.size(); ++b) {
      Tensor master = reader.tensor("master." + std::to_string(b), buckets_[b].master);
      EMBER_CHECK(master.defined(), "DataParallelOptimizer state: no entry 'master." << b << "' (shape "
                                                                                     << buckets_[b].master.shape()
                                                                                     << ", this rank's part of bucket " << b
                                                                                     << ")");
      masters.push_back(std::move(master));
    }
  }
  const TensorMap inner = reader.part("inner.");
  const TensorMap scaler = fp16_ ? reader.part("scaler.") : TensorMap{};
  reader.finish();
  inner_->load_state_dict(inner);
  if (fp16_) scaler_.load_state_dict(scaler);
  for (size_t b = 0; b < masters.size(); ++b) kernels::copy_(buckets_[b].master.detach(), masters[b]);  // in place: the inner optimizer holds them
}

}  // namespace ember::train
