#pragma once
// The workload `ember bench-train` times, `ember plan` simulates and `ember lab` measures: a
// zoo model on synthetic batches of Fashion-MNIST's shape, with an optimizer by name (sgd: lr
// 0.05, momentum 0.9; adam, adamw: lr 1e-3), as a train::Workload (train/plan/workload.h).
//
//   ember::train::Workload w = zoo_workload("convnet", 256, "sgd", trainer_options, kCPU);
//   ember::train::StepPrediction p = ember::train::plan_step(w, /*threads=*/2);
#include <cstdint>
#include <string>

#include "train/plan/workload.h"

namespace ember::apps {

inline constexpr int kBenchPool = 8;  // distinct synthetic batches, cycled (as the libtorch peer)

train::Workload zoo_workload(const std::string& model, int64_t batch, const std::string& optimizer,
                             const train::TrainerOptions& trainer = {}, Device device = kCPU);

}  // namespace ember::apps
