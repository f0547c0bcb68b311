#pragma once
// The memory-technique flags `ember train` and `ember bench-train` share, and their
// translation into train::TrainerOptions (checked before any training starts).
//
//   ember train --model resnet20 --checkpoint sqrt          # recompute ceil(sqrt(n)) segments
//   ember train --model convnet --precision fp16            # f16 compute, fp32 master weights, loss scaling
//   ember train --model convnet --batch 256 --accum 4       # 4 micro-batches of 64 per optimizer step
//   mpirun -np 4 ember train --model convnet --zero 2       # each rank: 1/4 of optimizer state and gradients
#include <cstdint>
#include <string>

#include "train/trainer.h"

namespace CLI {
class App;
}

namespace ember::apps {

struct TechniqueOptions {
  std::string precision = "fp32";   // --precision fp32 | fp16
  std::string checkpoint = "none";  // --checkpoint none | sqrt | N
  int64_t accum = 1;                // --accum N: micro-batches per optimizer step
  int zero = 0;                     // --zero 0|1|2: ZeRO sharding over the ranks of a data-parallel job
  std::string bucket_size = "25MiB";  // --bucket-size: the gradients a data-parallel job sends at once
};

void add_technique_options(CLI::App* command, TechniqueOptions& options);
// Checks the values (unknown precision, checkpoint 0, accum that does not divide batch: each error
// names the value and what is allowed) and returns the trainer's options (data_parallel.zero set,
// its group left for the caller: apps/rank_run.h).
train::TrainerOptions trainer_options(const TechniqueOptions& options, int64_t batch);
// "fp16, checkpoint sqrt (4 segments), accum 4 x 64, 2 ranks zero 1": for the banner line.
std::string describe(const train::Trainer& trainer, int64_t batch);

}  // namespace ember::apps
