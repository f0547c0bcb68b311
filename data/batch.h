#pragma once
// Batch: what one step of a DataLoader yields.
#include <cstdint>

#include "core/tensor.h"

namespace ember::data {

struct Batch {
  Tensor images;      // [B, C, H, W] f32, transformed and normalised, on the loader's device
  Tensor labels;      // [B] i64, on the loader's device
  int64_t index = 0;  // position of the batch in its epoch
  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
};

}  // namespace ember::data
