#include "apps/technique_options.h"

#include <CLI/CLI.hpp>
#include <sstream>

#include "apps/cli_checks.h"
#include "apps/flag_words.h"
#include "core/error.h"
#include "memory/byte_size.h"

namespace ember::apps {

void add_technique_options(CLI::App* command, TechniqueOptions& o) {
  command->add_option("--precision", o.precision,
                      "fp32 | fp16 (f16 weights and activations, fp32 master weights, dynamic loss scaling)")
      ->check(one_of({"fp32", "fp16"}))
      ->capture_default_str();
  command->add_option("--checkpoint", o.checkpoint,
                      "Gradient checkpointing: none | sqrt (ceil(sqrt(layers)) segments) | N segments")
      ->capture_default_str();
  command->add_option("--accum", o.accum,
                      "Gradient accumulation: micro-batches per optimizer step (--batch stays the effective batch)")
      ->check(positive_integer())
      ->capture_default_str();
  command->add_option("--zero", o.zero,
                      "ZeRO sharding of a data-parallel run (mpirun -np N): 0 none, 1 the optimizer state (and fp16's "
                      "fp32 masters), 2 also the gradients")
      ->check(integer_between(0, 2, "a ZeRO stage"))
      ->capture_default_str();
  command->add_option("--bucket-size", o.bucket_size,
                      "Data parallel: the gradients sent at once, in reverse order of the layers (PyTorch DDP's "
                      "bucket_cap_mb); ZeRO 2 frees each bucket once sent, so it saves memory when the model spans "
                      "several")
      ->capture_default_str();
}

train::TrainerOptions trainer_options(const TechniqueOptions& o, int64_t batch) {
  train::TrainerOptions t;
  t.precision = train::parse_precision(o.precision, "--precision");
  t.checkpoint = train::CheckpointPolicy::parse(o.checkpoint, "--checkpoint");
  t.accum = o.accum;
  t.data_parallel.zero = o.zero;
  t.data_parallel.bucket_bytes = static_cast<int64_t>(parse_byte_size(o.bucket_size, "--bucket-size"));
  try {
    t.check(batch);
  } catch (const Error& e) {
    throw Error(flag_words(e.what()));
  }
  return t;
}

std::string describe(const train::Trainer& trainer, int64_t batch) {
  const train::TrainerOptions& t = trainer.options();
  std::ostringstream os;
  os << train::precision_name(t.precision) << ", checkpoint " << t.checkpoint.str();
  if (trainer.checkpoint_segments() > 0 && t.checkpoint.kind != train::CheckpointPolicy::Kind::segments)
    os << " (" << trainer.checkpoint_segments() << " segments)";
  if (t.accum > 1) os << ", accum " << t.accum << " x " << batch / t.accum;
  if (t.data_parallel.enabled())
    os << ", " << t.data_parallel.ranks() << (t.data_parallel.ranks() == 1 ? " rank" : " ranks") << " zero "
       << t.data_parallel.zero;
  return os.str();
}

}  // namespace ember::apps
