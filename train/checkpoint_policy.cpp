#include "train/checkpoint_policy.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/parse_integer.h"

namespace ember::train {

CheckpointPolicy CheckpointPolicy::parse(const std::string& text, const char* what) {
  if (text == "none") return none();
  if (text == "sqrt") return sqrt();
  int64_t n = 0;
  EMBER_CHECK(read_decimal(text, &n),
              what << ": '" << text << "' is not a checkpoint policy; expected none, sqrt or a number of segments (1, 2, ...)");
  EMBER_CHECK(n >= 1, what << ": " << n << " segments is not allowed; give at least 1 (or none to turn checkpointing off)");
  return fixed(n);
}

void CheckpointPolicy::check() const {
  EMBER_CHECK(kind != Kind::segments || segments >= 1,
              "checkpoint: " << segments << " segments is not allowed; give at least 1 (or none to turn checkpointing off)");
}

int64_t CheckpointPolicy::segments_for(int64_t layers) const {
  switch (kind) {
    case Kind::none: return 0;
    case Kind::sqrt: return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(layers)))));
    case Kind::segments:
      EMBER_CHECK(segments <= layers, "checkpoint: " << segments << " segments asked for a model of " << layers
                                                     << " top-level layers; give at most " << layers << " (or sqrt)");
      return segments;
  }
  return 0;
}

std::string CheckpointPolicy::str() const {
  switch (kind) {
    case Kind::none: return "none";
    case Kind::sqrt: return "sqrt";
    case Kind::segments: return std::to_string(segments);
  }
  return "?";
}

}  // namespace ember::train
