#include "train/evaluate.h"

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "models/metrics.h"

namespace ember::train {

Evaluation evaluate(nn::Module& model, data::DataLoader& loader, const LossFn& loss) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const std::vector<Tensor> params = model.parameters();
  const DType compute = params.empty() ? DType::f32 : params.front().dtype();
  Evaluation e;
  int64_t correct = 0;
  double loss_sum = 0.0;
  for (data::Batch& batch : loader) {
    const Tensor& x = batch.images;
    const Tensor output = model.forward(is_floating(x.dtype()) && x.dtype() != compute ? to_dtype(x, compute) : x);
    const Tensor& target = batch.target();
    const Tensor batch_loss = loss ? loss(output, target) : cross_entropy(output, target);
    loss_sum += batch_loss.item<double>() * static_cast<double>(batch.size());
    if (target.dtype() == DType::i64 && target.dim() == 1 && output.dim() == 2)
      correct += models::count_correct(output, target);
    e.samples += batch.size();
  }
  model.train(was_training);
  if (e.samples > 0) {
    e.accuracy = static_cast<double>(correct) / static_cast<double>(e.samples);
    e.loss = loss_sum / static_cast<double>(e.samples);
  }
  return e;
}

}  // namespace ember::train
