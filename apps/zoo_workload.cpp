#include "apps/zoo_workload.h"

#include "models/zoo.h"
#include "optim/make_optimizer.h"

namespace ember::apps {

namespace {
constexpr double kBenchSgdLr = 0.05;
constexpr double kBenchAdamLr = 1e-3;
}  // namespace

train::Workload zoo_workload(const std::string& model, int64_t batch, const std::string& optimizer,
                             const train::TrainerOptions& trainer, Device device) {
  train::Workload w;
  w.sample = Shape{1, 28, 28};
  w.classes = 10;
  w.model = [model, sample = w.sample, classes = w.classes] { return models::make_model(model, sample, classes); };
  optim::OptimizerSpec spec;
  spec.name = optimizer;
  spec.lr = optimizer == "sgd" ? kBenchSgdLr : kBenchAdamLr;
  spec.momentum = 0.9;
  w.optimizer = [spec](std::vector<Tensor> params) { return optim::make_optimizer(spec, std::move(params)); };
  w.trainer = trainer;
  w.batch = batch;
  w.device = device;
  w.data_batches = kBenchPool;
  return w;
}

}  // namespace ember::apps
