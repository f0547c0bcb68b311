#pragma once
// Classification metrics.
//
//   double acc = ember::models::accuracy(model->forward(x), labels);   // in [0, 1]
#include <cstdint>

#include "core/tensor.h"

namespace ember::models {

// Number of rows of logits [N, C] whose argmax equals the i64 label [N].
int64_t count_correct(const Tensor& logits, const Tensor& labels);
// count_correct / N (0 for an empty batch).
double accuracy(const Tensor& logits, const Tensor& labels);

}  // namespace ember::models
