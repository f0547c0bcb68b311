// Data-parallel training (train/data_parallel.h) as every rank of `mpiexec -n 2` and `-n 3`, and
// in one process (a job of one rank). Each rank also trains the one-process reference itself, on
// the whole batch, so every rank can compare.
//
// The bound: the acceptance figure, 1e-5 of the largest weight after four steps. A
// data-parallel step is accumulation whose micro-batches run on the ranks, so what separates N
// ranks from one process is the order of the fp32 gradient sums, a few units of roundoff (6e-8)
// per step; 1e-5 lets through nothing of the wrong kind (a gradient counted twice, a shard
// stepped twice, a bucket sent empty all move weights by a learning-rate step, 1e-2 here).
// Under fp16 the gradients round to f16 once per micro-batch (before the sums), so the one
// process is given the ranks' micro-batches (accum N x a): a batch of B rounds differently
// from N parts of B / N whatever the ranks do, and that is not what is tested here. The f16
// weights are the fp32 masters rounded, so a master within the bound may still round to the
// neighbouring f16: one f16 step (2 u |w|) more for those.
#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "autograd/grad_mode.h"
#include "core/generator.h"
#include "core/row_view.h"
#include "dist/world.h"
#include "kernels/factories.h"
#include "models/activation.h"
#include "models/linear.h"
#include "models/sequential.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "tests/support/error_bound.h"
#include "tests/support/gpu_test_case.h"
#include "train/data_parallel_optimizer.h"
#include "train/trainer.h"

using namespace ember;

namespace {

constexpr int64_t kTrainerBatchPerRank = 12;
constexpr int64_t kSteps = 4;
constexpr double kAcceptance = 1e-5;

std::shared_ptr<nn::Module> make_mlp(uint64_t seed) {
  manual_seed(seed);
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(8, 16), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Linear>(16, 16), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Linear>(16, 4));
}

// Step k's whole batch, the same on every rank.
std::pair<Tensor, Tensor> batch_of_step(int64_t step, int64_t samples) {
  manual_seed(1000 + static_cast<uint64_t>(step));
  Tensor x = randn({samples, 8});
  Tensor y = rand({samples}, {}, 0.0, 4.0).to(DType::i64);
  return {x, y};
}

train::OptimizerFactory optimizer_named(const std::string& name) {
  return [name](std::vector<Tensor> params) -> std::unique_ptr<optim::Optimizer> {
    if (name == "adam") return std::make_unique<optim::Adam>(std::move(params), optim::AdamOptions(1e-2));
    return std::make_unique<optim::SGD>(std::move(params), optim::SgdOptions(0.05).momentum(0.9));
  };
}

struct Setup {
  std::string optimizer = "sgd";
  train::Precision precision = train::Precision::fp32;
  int64_t accum = 1;
  train::CheckpointPolicy checkpoint;
  int zero = 0;

  std::string str() const {
    std::ostringstream os;
    os << optimizer << ", " << train::precision_name(precision) << ", accum " << accum << ", checkpoint "
       << checkpoint.str() << ", zero " << zero;
    return os.str();
  }
};

// The weights (as f32) after kSteps steps. With a group, this rank trains on its rows of each
// batch, from weights seeded differently on each rank (the Trainer broadcasts rank 0's).
std::vector<Tensor> train_steps(const Setup& s, dist::ProcessGroup* group, int64_t accum, Device device = kCPU) {
  const int ranks = group ? group->size() : 1, rank = group ? group->rank() : 0;
  auto model = make_mlp(7 + static_cast<uint64_t>(rank));
  model->to(device);
  train::TrainerOptions o;
  o.precision = s.precision;
  o.accum = accum;
  o.checkpoint = s.checkpoint;
  o.data_parallel.group = group;
  o.data_parallel.zero = s.zero;
  o.data_parallel.bucket_bytes = 1024;  // several buckets, one parameter split over two
  train::Trainer trainer(model, optimizer_named(s.optimizer), o);
  const int64_t world_batch = kTrainerBatchPerRank * dist::world().size();
  for (int64_t step = 0; step < kSteps; ++step) {
    auto [x, y] = batch_of_step(step, world_batch);
    const int64_t rows = world_batch / ranks;
    trainer.step(row_view(x, rank * rows, rows).to(device), row_view(y, rank * rows, rows).to(device));
  }
  std::vector<Tensor> weights;
  for (const Tensor& p : model->parameters()) weights.push_back(p.detach().to(kCPU, DType::f32));
  return weights;
}

// The largest |a - b| over every weight beyond what is allowed there: kAcceptance of the largest
// |b|, and one step of `stored` (the weights' dtype) at |b|. 0 when every weight is within.
double excess_difference(const std::vector<Tensor>& a, const std::vector<Tensor>& b, DType stored) {
  REQUIRE(a.size() == b.size());
  double size = 0.0;
  for (const Tensor& t : b)
    for (float v : t.to_vector<float>()) size = std::max(size, std::abs(static_cast<double>(v)));
  const double step = stored == DType::f32 ? 0.0 : 2.0 * test::unit_roundoff(stored);
  double excess = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<float> x = a[i].to_vector<float>(), y = b[i].to_vector<float>();
    REQUIRE(x.size() == y.size());
    for (size_t k = 0; k < x.size(); ++k) {
      const double allowed = kAcceptance * size + step * std::abs(static_cast<double>(y[k]));
      excess = std::max(excess, std::abs(static_cast<double>(x[k]) - y[k]) - allowed);
    }
  }
  return std::max(excess, 0.0);
}

DType stored(const Setup& s) { return s.precision == train::Precision::fp16 ? DType::f16 : DType::f32; }

std::vector<Setup> setups() {
  std::vector<Setup> out;
  for (const char* optimizer : {"sgd", "adam"})
    for (train::Precision precision : {train::Precision::fp32, train::Precision::fp16})
      for (int64_t accum : {1, 2})
        for (bool checkpoint : {false, true}) {
          Setup s;
          s.optimizer = optimizer;
          s.precision = precision;
          s.accum = accum;
          s.checkpoint = checkpoint ? train::CheckpointPolicy::sqrt() : train::CheckpointPolicy::none();
          out.push_back(s);
        }
  return out;
}

}  // namespace

TEST_CASE("data parallel: N ranks with B/N samples each take the steps of one process with B", "[data_parallel]") {
  dist::ProcessGroup& world = dist::world();
  for (Setup s : setups()) {
    const int64_t reference_accum = s.precision == train::Precision::fp16 ? s.accum * world.size() : s.accum;
    const std::vector<Tensor> one_process = train_steps(s, nullptr, reference_accum);
    for (int zero : {0, 1, 2}) {
      s.zero = zero;
      INFO(world.size() << " ranks: " << s.str());
      CHECK(excess_difference(train_steps(s, &world, s.accum), one_process, stored(s)) == 0.0);
    }
  }
}

TEST_CASE("data parallel: ZeRO 1 and 2 take the steps of plain data parallel", "[data_parallel]") {
  // ZeRO 1 steps the same averaged gradients, elementwise, a shard per rank: the same bits.
  // ZeRO 2 reduce-scatters instead of all-reducing (another engine routine, which may add the
  // ranks in another order) and, with accumulation, every micro-batch: within the acceptance.
  dist::ProcessGroup& world = dist::world();
  for (Setup s : setups()) {
    const std::vector<Tensor> plain = train_steps(s, &world, s.accum);
    s.zero = 1;
    INFO(world.size() << " ranks: " << s.str());
    const std::vector<Tensor> zero1 = train_steps(s, &world, s.accum);
    for (size_t i = 0; i < plain.size(); ++i) CHECK(zero1[i].to_vector<float>() == plain[i].to_vector<float>());
    s.zero = 2;
    CHECK(excess_difference(train_steps(s, &world, s.accum), plain, stored(s)) == 0.0);
  }
}

// On GPUs the gradients travel through NCCL (mpiexec: one GPU per rank; in one process the group
// of one rank): the same comparisons, each side on the GPU.
EMBER_CUDA_TEST_CASE("data parallel on GPUs: N ranks take one process's steps, ZeRO 1 plain data parallel's",
                     "[data_parallel]") {
  dist::ProcessGroup& world = dist::world();
  const Device gpu(DeviceType::cuda, world.local_rank());
  for (Setup s : setups()) {
    const int64_t reference_accum = s.precision == train::Precision::fp16 ? s.accum * world.size() : s.accum;
    const std::vector<Tensor> one_process = train_steps(s, nullptr, reference_accum, gpu);
    const std::vector<Tensor> plain = train_steps(s, &world, s.accum, gpu);
    INFO(world.size() << " ranks on GPUs: " << s.str());
    CHECK(excess_difference(plain, one_process, stored(s)) == 0.0);
    s.zero = 1;
    const std::vector<Tensor> zero1 = train_steps(s, &world, s.accum, gpu);
    for (size_t i = 0; i < plain.size(); ++i) CHECK(zero1[i].to_vector<float>() == plain[i].to_vector<float>());
    s.zero = 2;
    CHECK(excess_difference(train_steps(s, &world, s.accum, gpu), plain, stored(s)) == 0.0);
  }
}
