#include "apps/bench_workload.h"

#include "apps/train_setup.h"
#include "core/generator.h"
#include "kernels/factories.h"
#include "memory/empty.h"
#include "memory/scopes.h"
#include "models/zoo.h"

namespace ember::apps {

namespace {
constexpr double kBenchSgdLr = 0.05;
constexpr double kBenchAdamLr = 1e-3;
}  // namespace

BenchWorkload make_bench_workload(const WorkloadSpec& spec) {
  const train::TrainerOptions trainer_opts = trainer_options(spec.technique, spec.batch);
  manual_seed(0);
  BenchWorkload w;
  {
    CategoryScope scope(MemoryCategory::data);
    for (int64_t bytes : spec.resident_bytes) w.resident.push_back(empty({bytes}, TensorOptions(DType::u8)));
  }
  w.model = models::make_model(spec.model, spec.sample, spec.classes);
  w.model->to(spec.device);
  {
    CategoryScope scope(MemoryCategory::data);
    std::vector<int64_t> batch_shape = spec.sample.sizes();
    batch_shape.insert(batch_shape.begin(), spec.batch);
    for (int i = 0; i < spec.data_batches; ++i) {
      w.images.push_back(randn(Shape(batch_shape)).to(spec.device));
      // floor(U[0, classes)) as i64
      w.labels.push_back(rand({spec.batch}, {}, 0.0, static_cast<double>(spec.classes)).to(DType::i64).to(spec.device));
    }
  }
  const std::string optimizer = spec.optimizer;
  w.trainer = std::make_unique<train::Trainer>(
      w.model,
      [optimizer](std::vector<Tensor> params) {
        return make_optimizer(optimizer, std::move(params), optimizer == "sgd" ? kBenchSgdLr : kBenchAdamLr, 0.9,
                              false, 0.0);
      },
      trainer_opts);
  w.model->train();
  return w;
}

}  // namespace ember::apps
