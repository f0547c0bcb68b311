#pragma once
// The one header a training program includes, as libtorch's <torch/torch.h>; ember:: is written
// where libtorch writes torch:: (docs/coming-from-libtorch.md says why not `using namespace ember;`:
// ember::train and ember::data would collide with a program's own train() and data):
//
//   #include "ember/ember.h"
//   auto net = std::make_shared<ember::nn::Sequential>(ember::nn::Linear(2, 64), ember::nn::ReLU(),
//                                                      ember::nn::Linear(64, 3));
//   ember::optim::SGD sgd(net->parameters(), ember::optim::SgdOptions(0.1).momentum(0.9));
//   ember::Tensor loss = ember::nll_loss(ember::log_softmax(net->forward(x), 1), y);
//   if (ember::cuda::is_available()) net->to(ember::kCUDA);
//
// It includes the public API a program trains with: tensors and their factories, the GPU check
// and the CPU threads, the differentiable ops and losses, grad mode, the layers, nn::init, the
// optimizers and schedules, the Trainer, a whole run (train::fit), the planner and the memory
// budget fit (train/plan/), the process group of a data-parallel job (dist/world.h), the data
// readers and loader, weights files and the memory report. Lower-level headers
// (kernels/ops.h, the allocators) stay separate. Installed as include/ember/ember/ember.h,
// found through the include directory include/ember like every other header.

// tensors, devices, dtypes, random state, the GPU check (cuda::is_available, device_count), threads
#include "core/cuda_runtime.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/generator.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "kernels/factories.h"
#include "kernels/threads.h"

// autograd: ops, losses, grad mode, gradient checks
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"

// nn
#include "models/activation.h"
#include "models/batch_norm.h"
#include "models/conv2d.h"
#include "models/dropout.h"
#include "models/flatten.h"
#include "models/functional.h"
#include "models/init.h"
#include "models/linear.h"
#include "models/metrics.h"
#include "models/mlp.h"
#include "models/module.h"
#include "models/pooling.h"
#include "models/recipe.h"
#include "models/sequential.h"
#include "models/zoo.h"

// optimizers, parameter groups and learning-rate schedules
#include "optim/adam.h"
#include "optim/lr_schedule.h"
#include "optim/make_optimizer.h"
#include "optim/param_group.h"
#include "optim/sgd.h"

// the training step with the memory techniques (checkpointing, fp16, accumulation), a whole
// run (epochs, evaluation, save and resume), and a step's memory planned before it runs
#include "train/evaluate.h"
#include "train/fit.h"
#include "train/plan/budget_fit.h"
#include "train/plan/step_plan.h"
#include "train/plan/workload.h"
#include "train/trainer.h"
#include "train/training_checkpoint.h"
#include "train/weights_file.h"

// several processes: the launcher's process group (mpirun), which TrainerOptions::data_parallel names
#include "dist/world.h"

// data and weights files
#include "data/data_loader.h"
#include "data/dataset.h"
#include "data/fashion_mnist.h"
#include "data/cifar10_reader.h"
#include "data/safetensors.h"
#include "data/sample_dataset.h"
#include "data/synthetic.h"

// memory statistics and reports
#include "memory/memory.h"
