// CheckpointPolicy::parse (--checkpoint none|sqrt|N) on any text. What it accepts prints back
// to a string that parses to the same policy, and a fixed count is at least 1.
#include "tests/fuzz/fuzz_target.h"
#include "train/checkpoint_policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ember::train::CheckpointPolicy;
  ember::fuzz::run([&] {
    const CheckpointPolicy policy = CheckpointPolicy::parse(ember::fuzz::text(data, size), "--checkpoint");
    if (policy.kind == CheckpointPolicy::Kind::segments && policy.segments < 1) ember::fuzz::broken("0 segments accepted");
    const CheckpointPolicy again = CheckpointPolicy::parse(policy.str(), "--checkpoint");
    if (again.kind != policy.kind || again.segments != policy.segments) ember::fuzz::broken("str() does not parse back");
  });
  return 0;
}
