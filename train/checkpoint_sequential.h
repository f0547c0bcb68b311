#pragma once
// Checkpointing an nn::Sequential in segments: each segment but the last runs under
// train::checkpoint, so only the segment boundaries stay alive between forward and
// backward, and one segment at a time is recomputed.
//
//   auto bounds = ember::train::balanced_segment_bounds(*net, 4, images);  // once per input shape
//   ember::Tensor logits = ember::train::checkpoint_sequential(*net, bounds, images);
//   ember::Tensor same = ember::train::checkpoint_sequential(*net, 4, images);  // equal layer counts
//
// Bounds are the layer indices where segments start, beginning with 0:
// {0, 3, 7} is layers [0, 3), [3, 7) and [7, n). The last segment is not
// checkpointed: its backward comes first, so recomputing it would save nothing.
//
// Equal layer counts (PyTorch's checkpoint_sequential) balance badly when layers
// differ in size: a ConvNet's early full-resolution layers hold most of its
// activations. balanced_segment_bounds measures what each layer keeps for backward
// (one forward of the first two samples, graph kept, nothing updated) and picks the
// split whose highest point, the boundaries kept so far plus the segment being
// recomputed, is lowest.
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "models/sequential.h"

namespace ember::train {

// Segment starts for `segments` segments of near-equal layer counts.
std::vector<int64_t> equal_segment_bounds(int64_t layers, int64_t segments);
// Segment starts for `segments` segments of near-equal kept activation bytes, measured on `sample`.
std::vector<int64_t> balanced_segment_bounds(nn::Sequential& seq, int64_t segments, const Tensor& sample);

Tensor checkpoint_sequential(nn::Sequential& seq, const std::vector<int64_t>& bounds, const Tensor& x);
Tensor checkpoint_sequential(nn::Sequential& seq, int64_t segments, const Tensor& x);

}  // namespace ember::train
