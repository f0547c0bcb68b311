// train::fit data-parallel (train/fit.h), as every rank of `mpiexec -n 2` and `-n 3` and in one
// process: the job's epoch results and evaluation, BatchNorm statistics, checkpoints that
// resume bit for bit (also after a save that reached only some ranks), ZeRO's memory, and
// ranks started with different options.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/generator.h"
#include "data/data_loader.h"
#include "data/synthetic.h"
#include "dist/world.h"
#include "kernels/factories.h"
#include "memory/empty.h"
#include "models/activation.h"
#include "models/batch_norm.h"
#include "models/conv2d.h"
#include "models/flatten.h"
#include "models/linear.h"
#include "models/sequential.h"
#include "models/zoo.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "train/fit.h"
#include "train/rank_checkpoint.h"

using namespace ember;

namespace {

constexpr int64_t kFitBatchPerRank = 8;

train::OptimizerFactory adam() {
  return [](std::vector<Tensor> params) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::Adam>(std::move(params), optim::AdamOptions(1e-2));
  };
}

train::OptimizerFactory sgd() {
  return [](std::vector<Tensor> params) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::SGD>(std::move(params), optim::SgdOptions(0.1).momentum(0.9));
  };
}

// Spirals of 3 x 96 points: a whole number of batches of B = 8 N for N = 1, 2, 3 (no padding).
data::Dataset spirals() {
  data::SyntheticOptions s;
  s.samples_per_class = 96;
  return data::make_spirals(s);
}

data::DataLoaderOptions loader(int64_t batch, bool shuffle, dist::ProcessGroup* group, data::ShardEnds ends) {
  data::DataLoaderOptions o = data::DataLoaderOptions(batch).shuffle(shuffle).seed(5).prefetch(false);
  return group ? o.shard(group->rank(), group->size(), ends) : o;
}

// A folder every rank of the job names alike: rank 0's, broadcast.
std::string shared_folder(dist::ProcessGroup& group) {
  Tensor name = zeros({256}, TensorOptions().dtype(DType::u8));
  if (group.rank() == 0) {
    std::string made = (std::filesystem::temp_directory_path() / "ember-dp-fit-XXXXXX").string();
    REQUIRE(mkdtemp(made.data()) != nullptr);
    REQUIRE(made.size() < 255);
    std::copy(made.begin(), made.end(), name.data<uint8_t>());
  }
  group.broadcast(name, 0);
  return std::string(reinterpret_cast<const char*>(name.data<uint8_t>()));
}

struct Run {
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<train::Trainer> trainer;
};

Run mlp_run(dist::ProcessGroup* group, int zero, uint64_t seed = 3) {
  manual_seed(seed);
  Run r;
  r.model = models::make_model("mlp", Shape{2, 1, 1}, 3);
  train::TrainerOptions o;
  o.data_parallel.group = group;
  o.data_parallel.zero = zero;
  r.trainer = std::make_unique<train::Trainer>(r.model, adam(), o);
  return r;
}

// The state every rank's file holds, as bytes per entry.
std::vector<std::pair<std::string, std::vector<uint8_t>>> state_bytes(const train::Trainer& trainer) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  for (const auto& [name, t] : trainer.state_dict()) {
    const Tensor c = t.to(kCPU);
    const auto* p = static_cast<const uint8_t*>(c.data_ptr());
    out.emplace_back(name, std::vector<uint8_t>(p, p + c.nbytes()));
  }
  return out;
}

}  // namespace

TEST_CASE("data parallel fit: the job's epochs and evaluation are one process's, on every rank", "[data_parallel]") {
  dist::ProcessGroup& world = dist::world();
  const data::Dataset d = spirals();
  const int64_t batch = kFitBatchPerRank * world.size();
  Run one = mlp_run(nullptr, 0);
  data::DataLoader one_train(d, loader(batch, true, nullptr, data::ShardEnds::pad));
  data::DataLoader one_eval(d, loader(50, false, nullptr, data::ShardEnds::pad));
  train::FitOptions o;
  o.epochs = 2;
  const train::FitResult expected = train::fit(*one.trainer, one_train, &one_eval, o);

  Run ranks = mlp_run(&world, 1, /*seed=*/3 + world.rank());
  data::DataLoader train_part(d, loader(kFitBatchPerRank, true, &world, data::ShardEnds::pad));
  data::DataLoader eval_part(d, loader(50, false, &world, data::ShardEnds::uneven));
  const train::FitResult got = train::fit(*ranks.trainer, train_part, &eval_part, o);

  REQUIRE(got.epochs.size() == 2);
  for (size_t e = 0; e < 2; ++e) {
    INFO("epoch " << e + 1);
    CHECK(got.epochs[e].samples == d.size());  // the job's samples, each once
    CHECK(got.epochs[e].eval->samples == d.size());
    // As the trainer test: the ranks differ from one process by the order of fp32 sums.
    CHECK(got.epochs[e].loss == Approx(expected.epochs[e].loss).epsilon(1e-5));
    CHECK(got.epochs[e].eval->loss == Approx(expected.epochs[e].eval->loss).epsilon(1e-5));
    CHECK(got.epochs[e].accuracy == Approx(expected.epochs[e].accuracy).margin(1.5 / d.size()));
  }
  // The same numbers on every rank: rank 0's, broadcast, compared.
  Tensor mine = from_vector<double>({got.final_loss, got.final_eval->accuracy, got.final_eval->loss}, Shape{3},
                                    TensorOptions().dtype(DType::f64));
  Tensor rank0 = mine.clone();
  world.broadcast(rank0, 0);
  CHECK(mine.to_vector<double>() == rank0.to_vector<double>());
}

TEST_CASE("data parallel fit: BatchNorm statistics are rank 0's when the ranks evaluate", "[data_parallel]") {
  dist::ProcessGroup& world = dist::world();
  manual_seed(11);
  const int64_t n = 48 * world.size();
  const data::Dataset d = data::make_dataset("images", randn({n, 1, 8, 8}), rand({n}, {}, 0.0, 3.0).to(DType::i64), 3);
  manual_seed(12 + world.rank());
  auto model = std::make_shared<nn::Sequential>(
      std::make_shared<nn::Conv2d>(1, 4, 3), std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(4 * 6 * 6, 3));
  train::TrainerOptions t;
  t.data_parallel.group = &world;
  train::Trainer trainer(model, sgd(), t);
  data::DataLoader train_part(d, loader(kFitBatchPerRank, true, &world, data::ShardEnds::pad));
  data::DataLoader eval_part(d, loader(16, false, &world, data::ShardEnds::uneven));
  train::FitOptions o;
  train::fit(trainer, train_part, &eval_part, o);
  for (const Tensor& b : model->buffers()) {
    Tensor rank0 = b.clone();
    world.broadcast(rank0, 0);
    CHECK(b.to(DType::f64).to_vector<double>() == rank0.to(DType::f64).to_vector<double>());
  }
}

TEST_CASE("data parallel fit: a resumed run ends bit for bit as the uninterrupted one, also after a save that "
          "reached only some ranks", "[data_parallel]") {
  dist::ProcessGroup& world = dist::world();
  const std::string folder = shared_folder(world);
  const data::Dataset d = spirals();
  for (int zero : {0, 2}) {
    INFO("zero " << zero);
    train::FitOptions o;
    o.epochs = 2;
    Run whole = mlp_run(&world, zero);
    data::DataLoader whole_loader(d, loader(kFitBatchPerRank, true, &world, data::ShardEnds::pad));
    train::fit(*whole.trainer, whole_loader, nullptr, o);

    o.save = folder + "/run" + std::to_string(zero) + ".ckpt";
    o.save_every = 5;
    Run stopped = mlp_run(&world, zero);
    data::DataLoader stopped_loader(d, loader(kFitBatchPerRank, true, &world, data::ShardEnds::pad));
    train::FitCallbacks stop;
    stop.before_step = [](int64_t step) {
      if (step == 17) throw std::runtime_error("stopped on purpose");  // after the save of step 15
    };
    CHECK_THROWS_WITH(train::fit(*stopped.trainer, stopped_loader, nullptr, o, stop), "stopped on purpose");
    // The job died while saving step 15: the last rank's file never came (its previous, step 10, stays).
    if (world.size() > 1 && world.rank() == world.size() - 1) {
      const std::string mine = train::rank_checkpoint_path(o.save, world.rank());
      std::filesystem::remove(mine);
      std::filesystem::rename(mine + ".previous", mine);
    }
    world.barrier();
    o.resume = o.save;
    Run resumed = mlp_run(&world, zero, /*seed=*/99);  // its own initial weights: the checkpoint's replace them
    data::DataLoader resumed_loader(d, loader(kFitBatchPerRank, true, &world, data::ShardEnds::pad));
    const train::FitResult r = train::fit(*resumed.trainer, resumed_loader, nullptr, o);
    // Saved: every 5 steps and at the end of epoch 1 (36 / N steps); the last rank lost step 15's.
    const int64_t epoch_end = resumed_loader.batches_per_epoch();
    const int64_t before_15 = epoch_end > 10 && epoch_end < 15 ? epoch_end : 10;
    CHECK(r.first_step == (world.size() > 1 ? before_15 : 15));
    CHECK(state_bytes(*resumed.trainer) == state_bytes(*whole.trainer));
  }
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove_all(folder);
}

TEST_CASE("data parallel: ZeRO 1 and 2 keep 1/N of the optimizer state on each rank", "[data_parallel]") {
  dist::ProcessGroup& world = dist::world();
  const data::Dataset d = spirals();
  std::vector<size_t> state;
  for (int zero : {0, 1, 2}) {
    Run r = mlp_run(&world, zero);
    data::DataLoader part(d, loader(kFitBatchPerRank, true, &world, data::ShardEnds::pad));
    train::FitOptions o;
    train::fit(*r.trainer, part, nullptr, o);
    state.push_back(r.trainer->optimizer().state_bytes());
  }
  const auto params = static_cast<size_t>(models::make_model("mlp", Shape{2, 1, 1}, 3)->num_parameters());
  // Adam: two f32 moments per element; a shard is 1/N of each bucket, rounded up to whole elements.
  CHECK(state[0] >= 2 * 4 * params);
  const size_t buckets = 1;  // the mlp's 35k parameters fit one 25 MiB bucket
  for (size_t k : {1, 2}) {
    CHECK(state[k] >= 2 * 4 * params / world.size());
    CHECK(state[k] <= 2 * 4 * (params / world.size() + buckets) + state[0] - 2 * 4 * params);
  }
}

TEST_CASE("data parallel: ranks started with different options are refused, naming the option", "[data_parallel]") {
  dist::ProcessGroup& world = dist::world();
  if (world.size() == 1) return;  // one rank agrees with itself
  auto model = models::make_model("mlp", Shape{2, 1, 1}, 3);
  train::TrainerOptions o;
  o.data_parallel.group = &world;
  o.accum = world.rank() == 1 ? 2 : 1;
  CHECK_THROWS_WITH(train::Trainer(model, sgd(), o),
                    Catch::Matchers::Contains("accum is 1 on rank") && Catch::Matchers::Contains("and 2 on rank 1"));
}
