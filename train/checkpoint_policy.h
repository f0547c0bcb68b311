#pragma once
// How many checkpoint segments a Sequential model is split into: the value of
// `ember train --checkpoint none|sqrt|N`.
//
//   auto policy = ember::train::CheckpointPolicy::parse("sqrt", "--checkpoint");
//   int64_t k = policy.segments_for(model->size());   // ceil(sqrt(15)) = 4 for ResNet-20's 15 layers
//
// sqrt is Chen et al. 2016 ("Training deep nets with sublinear memory cost"):
// ceil(sqrt(n)) segments of about sqrt(n) layers each, so the stored segment
// inputs and the one segment recomputed at a time are both O(sqrt(n)).
#include <cstdint>
#include <string>

namespace ember::train {

struct CheckpointPolicy {
  enum class Kind { none, sqrt, segments };
  Kind kind = Kind::none;
  int64_t segments = 0;  // Kind::segments only

  static CheckpointPolicy none() { return {}; }
  static CheckpointPolicy sqrt() { return {Kind::sqrt, 0}; }
  static CheckpointPolicy fixed(int64_t segments) { return {Kind::segments, segments}; }
  // "none", "sqrt" or a positive integer; `what` names the flag in the error.
  static CheckpointPolicy parse(const std::string& text, const char* what = "checkpoint");

  bool enabled() const { return kind != Kind::none; }
  // Throws for a fixed count below 1 (what parse refuses, for a policy built by hand).
  void check() const;
  // Segments for a model of `layers` top-level layers (0 when disabled); throws when
  // a fixed count is larger than `layers`.
  int64_t segments_for(int64_t layers) const;
  std::string str() const;  // "none", "sqrt", "4"
};

}  // namespace ember::train
