#pragma once
// BufferRollback: copies of a model's buffers (BatchNorm's running statistics) that are put
// back when it is destroyed, unless the work it guards went through. A forward updates the
// running statistics as it goes, so a training step that fails after (an out-of-memory in
// backward, say) would otherwise leave them counting a batch the step never finished, and
// count it again when the step is retried. Trainer::step holds one for the whole step.
//
//   train::BufferRollback rollback(model);   // copies every buffer (a model without any: nothing)
//   loss = ...forward...; loss.backward(); optimizer.step();
//   rollback.keep();                         // the step went through: keep the new values
#include <vector>

#include "core/tensor.h"
#include "models/module.h"

namespace ember::train {

class BufferRollback {
 public:
  explicit BufferRollback(const nn::Module& model);
  ~BufferRollback();  // copies the saved values back, unless keep() was called
  BufferRollback(const BufferRollback&) = delete;
  BufferRollback& operator=(const BufferRollback&) = delete;

  void keep() { saved_.clear(); }

 private:
  std::vector<Tensor> buffers_;  // the model's own tensors
  std::vector<Tensor> saved_;    // their values when the rollback was made
};

}  // namespace ember::train
