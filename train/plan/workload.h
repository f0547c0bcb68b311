#pragma once
// The training step a plan simulates and a benchmark times, built by one function so that the
// plan runs the very code the run executes: the model on its device, its optimizer, a pool of
// synthetic batches (memory category `data`) and a Trainer with the memory techniques.
//
//   ember::train::Workload w;
//   w.model = [] { return ember::models::make_model("convnet", ember::Shape{1, 28, 28}, 10); };
//   w.optimizer = [](std::vector<ember::Tensor> p) { return ember::optim::make_optimizer({}, std::move(p)); };
//   w.batch = 256;
//   w.trainer.accum = 4;
//   ember::train::BuiltWorkload built = ember::train::build_workload(w);
//   built.step(0);   // one optimizer step on batch 0 of the pool
//
// A model of your own and a loss of your own work the same way: targets are class labels unless
// `target` gives each sample's target shape (then f32 values), as a regression's loss takes them.
//
// One rank of a data-parallel job: `ranks` and trainer.data_parallel.zero. A planned step (in a
// SimulationScope) runs with a dist::PlannedProcessGroup of `ranks`, so one process plans what
// each rank holds; a real step needs trainer.data_parallel.group, a group of `ranks` processes.
//
//   w.ranks = 4;
//   w.trainer.data_parallel.zero = 2;
//   ember::train::plan_step(w, /*threads=*/2);   // one rank's peak, by category
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/shape.h"
#include "core/tensor.h"
#include "dist/process_group.h"
#include "models/module.h"
#include "train/trainer.h"

namespace ember::train {

using ModelFactory = std::function<std::shared_ptr<nn::Module>()>;

struct Workload {
  ModelFactory model;         // builds the model (initialised from the generator, on the CPU)
  OptimizerFactory optimizer;
  TrainerOptions trainer;     // precision, checkpoint, accum, loss, data_parallel
  int64_t batch = 64;         // the effective batch (accum micro-batches of batch / accum), of one rank
  int ranks = 1;              // the processes of a data-parallel job
  Device device = kCPU;
  Shape sample{1, 28, 28};    // one input's shape
  Shape target;               // one target's shape; empty: a class label, i64 in [0, classes)
  int64_t classes = 10;
  int data_batches = 8;       // batches held at once (a loader's prefetched ones and the one in use)
  // Bytes already held before the workload is built, in allocation order (ember train: the data
  // set's tensors), so a plan shares segments with them as the real run does.
  std::vector<int64_t> resident_bytes;
};

struct BuiltWorkload {
  std::unique_ptr<dist::ProcessGroup> planned_ranks;  // a planned data-parallel step's group
  std::vector<Tensor> resident;  // stand-ins for Workload::resident_bytes
  std::shared_ptr<nn::Module> model;
  std::vector<Tensor> inputs, targets;
  std::unique_ptr<Trainer> trainer;
  // One optimizer step on batch i of the pool (cycled).
  StepResult step(size_t i) { return trainer->step(inputs[i % inputs.size()], targets[i % targets.size()]); }
};

// Seeds the generator (0), then builds: the resident bytes, the model, the batches, the trainer.
BuiltWorkload build_workload(const Workload& workload);

}  // namespace ember::train
