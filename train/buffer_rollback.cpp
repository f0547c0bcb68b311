#include "train/buffer_rollback.h"

#include "autograd/grad_mode.h"
#include "kernels/ops.h"
#include "memory/scopes.h"

namespace ember::train {

BufferRollback::BufferRollback(const nn::Module& model) : buffers_(model.buffers()) {
  NoGradGuard no_grad;
  CategoryScope category(MemoryCategory::temporary);
  OpNameScope op("buffer rollback");
  saved_.reserve(buffers_.size());
  for (const Tensor& b : buffers_) saved_.push_back(b.clone());
}

BufferRollback::~BufferRollback() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < saved_.size(); ++i) {
    try {
      kernels::copy_(buffers_[i], saved_[i]);
    } catch (...) {  // a destructor must not throw (copy_ allocates nothing: only a device error could)
    }
  }
}

}  // namespace ember::train
