#pragma once
// Batch: what one step of a DataLoader yields.
#include <cstdint>

#include "core/tensor.h"

namespace ember::data {

struct Batch {
  Tensor images;      // [B, C, H, W] f32, transformed and normalised, on the loader's device
  Tensor labels;      // [B] i64, on the loader's device
  Tensor targets;     // [B, ...] f32 when the dataset's samples carry targets (data::Sample::target), else undefined
  int64_t index = 0;  // position of the batch in its epoch
  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
  // What a loss compares the model's output with: the targets when there are, else the labels.
  const Tensor& target() const { return targets.defined() ? targets : labels; }
};

}  // namespace ember::data
