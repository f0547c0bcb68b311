#pragma once
// A batch of Fashion-MNIST's shape from the seeded generator, for training-loop tests:
//
//   test::Batch b = test::make_batch(8, /*seed=*/3);  // images (8, 1, 28, 28), labels (8,) in 0..9
#include <cstdint>

#include "core/generator.h"
#include "core/tensor.h"
#include "kernels/factories.h"

namespace ember::test {

struct Batch {
  Tensor images, labels;
};

inline Batch make_batch(int64_t n, uint64_t seed) {
  manual_seed(seed);
  return {randn({n, 1, 28, 28}), rand({n}, {}, 0.0, 10.0).to(kInt64)};
}

}  // namespace ember::test
