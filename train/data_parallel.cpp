#include "train/data_parallel.h"

#include "autograd/grad_mode.h"
#include "core/error.h"

namespace ember::train {

void DataParallelOptions::check() const {
  EMBER_CHECK(zero >= 0 && zero <= 2, "DataParallelOptions: zero = " << zero
                                                                     << ": the ZeRO stage is 0 (none), 1 (optimizer state) "
                                                                        "or 2 (optimizer state and gradients)");
  EMBER_CHECK(bucket_bytes >= 1, "DataParallelOptions: bucket_bytes = " << bucket_bytes << " must be at least 1 byte");
}

void broadcast_buffers(nn::Module& model, dist::ProcessGroup& group, int root) {
  NoGradGuard no_grad;
  for (const Tensor& b : model.buffers()) group.broadcast(b, root);
}

void broadcast_module(nn::Module& model, dist::ProcessGroup& group, int root) {
  NoGradGuard no_grad;
  for (const Tensor& p : model.parameters()) group.broadcast(p.detach(), root);
  broadcast_buffers(model, group, root);
}

}  // namespace ember::train
