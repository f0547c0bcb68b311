#pragma once
// Guard bytes around every tensor allocated in a scope: a debugging aid for kernels (the
// op-contract test, tests/ops/, runs every op inside one, as ggml's test-backend-ops does).
//
//   ember::GuardBytesScope guard;           // this thread's empty() calls are guarded from here
//   ember::Tensor y = ember::conv2d(x, w);  // outputs, scratch and workspace tensors alike
//   for (const std::string& v : guard.violations()) std::cerr << v << "\n";
//
// While a scope is alive, empty() allocates kGuardBytes more on each side of a tensor's bytes,
// sets them to kGuardByte and fills the tensor itself with 0xFF bytes (NaN in every floating
// dtype, -1 in i64), so a kernel that writes past either end changes a guard byte and one that
// leaves an output element unwritten leaves a NaN the comparison sees. The scope keeps every
// guarded storage alive until it ends, so temporaries freed inside the op are checked too.
// Memory statistics count the guard bytes: do not measure memory inside a scope.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ember {

class GuardBytesScope {
 public:
  static constexpr size_t kGuardBytes = 256;  // keeps cudaMalloc's 256-byte alignment
  static constexpr unsigned char kGuardByte = 0xA5;

  GuardBytesScope();
  ~GuardBytesScope();
  GuardBytesScope(const GuardBytesScope&) = delete;
  GuardBytesScope& operator=(const GuardBytesScope&) = delete;

  // One line per guarded allocation whose guard bytes changed: the op that allocated it,
  // the tensor, which side and how far from the edge the first changed byte lies.
  std::vector<std::string> violations() const;

  // memory/empty.cpp: the active scope on this thread, or null.
  static GuardBytesScope* current();
  // Allocates `bytes` (> 0) with guards for a tensor of `shape` and returns its storage;
  // the tensor's bytes start at kGuardBytes.
  std::shared_ptr<Storage> allocate(size_t bytes, const AllocationRequest& request, const Shape& shape, DType dtype);

 private:
  struct Guarded {
    std::shared_ptr<Storage> storage;
    size_t bytes;
    std::string what;  // "Tensor[2, 3] f32 cuda:0 from 'conv2d'"
  };
  std::vector<Guarded> guarded_;
  GuardBytesScope* previous_;
};

}  // namespace ember
