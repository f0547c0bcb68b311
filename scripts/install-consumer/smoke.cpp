// Built by scripts/check-install.sh against an installed ember, twice: with only
// `pkg-config --cflags --libs ember`, and through the CMake package in this folder's
// project. A few Trainer steps on the spirals reach every library, from train/ down to
// core/, and dist::world() with an all_reduce reaches dist/ and the MPI and NCCL it links
// (when ember was built with them), so a missing library or a wrong link order fails the link.
#include <iostream>
#include <memory>
#include <vector>

#include "core/cuda_runtime.h"
#include "data/synthetic.h"
#include "dist/world.h"
#include "memory/memory.h"
#include "models/mlp.h"
#include "optim/sgd.h"
#include "train/trainer.h"

int main() {
  using namespace ember;
  data::Dataset spirals = data::make_spirals();
  Tensor x = spirals.images.reshape({-1, 2});  // [900, 2] f32
  auto net = std::make_shared<nn::MLP>(2, std::vector<int64_t>{16}, 3);
  train::Trainer trainer(net, [](std::vector<Tensor> params) {
    return std::make_unique<optim::SGD>(std::move(params), optim::SgdOptions(0.1));
  });
  train::StepResult result;
  for (int step = 0; step < 3; ++step) result = trainer.step(x, spirals.labels);
  dist::ProcessGroup& world = dist::world();  // one process: rank 0 of 1
  world.all_reduce(spirals.labels, dist::ReduceOp::sum);
  std::cout << "install smoke: 3 steps, loss " << result.loss << ", CUDA backend "
            << (cuda::compiled_with_cuda() ? "on" : "off") << ", " << cuda::device_count()
            << " GPU(s), peak " << memory_stats(kCPU).allocated_bytes.peak << " B on the CPU, dist rank "
            << world.rank() << " of " << world.size() << " (" << world.backend_name() << ")\n";
}
