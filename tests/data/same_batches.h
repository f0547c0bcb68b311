#pragma once
// Two loaders over the same data deliver the same batches, epoch by epoch: a CUDA loader
// against the CPU one (the copy must not change a bit), a resumed loader against a fresh one.
//
//   DataLoader cpu(d, options), gpu(d, DataLoaderOptions(options).device(kCUDA));
//   expect_same_batches(cpu, gpu, /*epochs=*/2);
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "data/data_loader.h"

namespace ember::test {

inline void expect_same_batches(data::DataLoader& expected, data::DataLoader& actual, int epochs) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    expected.start_epoch(epoch);
    actual.start_epoch(epoch);
    data::Batch x, y;
    while (expected.next(x)) {
      REQUIRE(actual.next(y));
      CHECK(y.images.device() == actual.options().device());
      CHECK(y.labels.device() == actual.options().device());
      CHECK(x.images.to_vector<float>() == y.images.to_vector<float>());
      CHECK(x.labels.to_vector<int64_t>() == y.labels.to_vector<int64_t>());
    }
    CHECK_FALSE(actual.next(y));
  }
}

}  // namespace ember::test
