#pragma once
// The training workload `ember bench-train` times and `ember plan` simulates, built by one
// function so the plan runs the very code the benchmark measures: a zoo model on the
// device, its optimizer, a pool of synthetic 28x28 batches (category `data`) and the
// Trainer with the memory techniques.
//
//   BenchWorkload w = make_bench_workload({"convnet", 256, "sgd", {}, kCPU});
//   w.step(0);   // one optimizer step on batch 0 of the pool
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/technique_options.h"
#include "models/module.h"
#include "train/trainer.h"

namespace ember::apps {

inline constexpr int kBenchPool = 8;  // distinct synthetic batches, cycled (as the libtorch peer)

struct WorkloadSpec {
  WorkloadSpec() = default;
  WorkloadSpec(std::string model_name, int64_t batch_size, std::string optimizer_name, TechniqueOptions techniques,
               Device on)
      : model(std::move(model_name)), batch(batch_size), optimizer(std::move(optimizer_name)),
        technique(std::move(techniques)), device(on) {}

  std::string model = "lenet5";
  int64_t batch = 64;
  std::string optimizer = "sgd";  // sgd (momentum 0.9, lr 0.05) | adam | adamw (lr 1e-3)
  TechniqueOptions technique;
  Device device = kCPU;
  int data_batches = kBenchPool;  // batches held at once (ember train's loader: prefetched + the one in use)
  Shape sample{1, 28, 28};        // one input's shape
  int64_t classes = 10;
  // Bytes already held before the workload is built, in allocation order (ember train: the
  // data set's tensors), so a plan shares segments with them as the real run does.
  std::vector<int64_t> resident_bytes;
};

struct BenchWorkload {
  std::vector<Tensor> resident;  // stand-ins for WorkloadSpec::resident_bytes
  std::shared_ptr<nn::Module> model;
  std::vector<Tensor> images, labels;
  std::unique_ptr<train::Trainer> trainer;

  // One optimizer step on batch i of the pool (cycled).
  train::StepResult step(size_t i) { return trainer->step(images[i % images.size()], labels[i % labels.size()]); }
};

// Seeds the generator (0) and builds the workload; the flags are checked first (technique_options.h).
BenchWorkload make_bench_workload(const WorkloadSpec& spec);

}  // namespace ember::apps
