#include "train/plan/workload.h"

#include "core/error.h"
#include "core/generator.h"
#include "core/simulation.h"
#include "dist/planned_process_group.h"
#include "kernels/factories.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::train {

namespace {

// [batch, one sample's sizes...]
Shape batched(int64_t batch, const Shape& one) {
  std::vector<int64_t> sizes = one.sizes();
  sizes.insert(sizes.begin(), batch);
  return Shape(sizes);
}

}  // namespace

BuiltWorkload build_workload(const Workload& w) {
  EMBER_CHECK(w.model && w.optimizer, "build_workload: the workload needs a model and an optimizer factory");
  w.trainer.check(w.batch);
  manual_seed(0);
  BuiltWorkload b;
  {
    CategoryScope scope(MemoryCategory::data);
    for (int64_t bytes : w.resident_bytes) b.resident.push_back(empty({bytes}, TensorOptions(DType::u8)));
  }
  b.model = w.model();
  EMBER_CHECK(b.model != nullptr, "build_workload: the model factory returned null");
  b.model->to(w.device);
  {
    CategoryScope scope(MemoryCategory::data);
    for (int i = 0; i < w.data_batches; ++i) {
      b.inputs.push_back(randn(batched(w.batch, w.sample)).to(w.device));
      if (w.target.dim() == 0)  // floor(U[0, classes)) as i64
        b.targets.push_back(rand({w.batch}, {}, 0.0, static_cast<double>(w.classes)).to(DType::i64).to(w.device));
      else
        b.targets.push_back(randn(batched(w.batch, w.target)).to(w.device));
    }
  }
  TrainerOptions trainer = w.trainer;
  const bool data_parallel = w.ranks > 1 || trainer.data_parallel.zero > 0;
  EMBER_CHECK(w.ranks >= 1, "build_workload: ranks = " << w.ranks << " must be at least 1");
  if (data_parallel && simulating()) {
    b.planned_ranks = std::make_unique<dist::PlannedProcessGroup>(w.ranks);
    trainer.data_parallel.group = b.planned_ranks.get();
  }
  EMBER_CHECK(!data_parallel || (trainer.data_parallel.group && trainer.data_parallel.group->size() == w.ranks),
              "build_workload: a data-parallel step of ranks = " << w.ranks << " needs trainer.data_parallel.group, "
                  "a group of that many processes (or a planned step: SimulationScope)");
  b.trainer = std::make_unique<Trainer>(b.model, w.optimizer, trainer);
  b.model->train();
  return b;
}

}  // namespace ember::train
