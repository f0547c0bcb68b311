#pragma once
// Node: one recorded op in the graph. Gradient contract: apply() receives the
// gradient of the op's single output and returns one gradient per input (an
// undefined Tensor where that input needs none). Saved tensors are detached
// aliases, dropped by release_saved() right after the node ran. Each is saved with
// its storage's version (core/tensor.h: Storage::version); saved() throws when an
// in-place write moved it since, instead of letting backward read the new values.
//
// An op records itself like this (see autograd/functions/*.cpp; record() and
// any_requires_grad() are in autograd/record.h):
//
//   Tensor y = kernels::unary(UnaryOp::exp, x, 0);
//   if (any_requires_grad({x})) {
//     auto node = std::make_shared<UnaryBackward>(...);
//     node->save(y);                       // saved(0) in apply()
//     record(y, node, {x});
//   }
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ember::autograd {

class Node {
 public:
  virtual ~Node();  // iterative: a long chain must not recurse once per node
  virtual const char* name() const = 0;
  virtual std::vector<Tensor> apply(const Tensor& grad_output) = 0;

  // Keeps a detached alias of t and its current version for backward; returns its index for saved().
  size_t save(const Tensor& t);
  // Throws if already released, or if the tensor was modified in place after save(). The check is
  // made where apply() reads the tensor, so a saved tensor that this backward does not need (mul's
  // input whose gradient is not wanted) may change freely.
  const Tensor& saved(size_t index) const;
  void release_saved() { saved_.clear(); saved_versions_.clear(); released_ = true; }
  size_t saved_count() const { return saved_.size(); }

  // One entry per input: the node that produced it (or the leaf's accumulator), or null.
  std::vector<std::shared_ptr<Node>> next;

 private:
  std::vector<Tensor> saved_;
  std::vector<uint64_t> saved_versions_;  // saved_[i].version() at save()
  bool released_ = false;
};

}  // namespace ember::autograd
