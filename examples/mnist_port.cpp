// pytorch/examples' cpp/mnist/mnist.cpp, libtorch's MNIST example, ported to ember line by line
// (docs/coming-from-libtorch.md has the table). What changed: torch:: is ember::, the layers are
// std::shared_ptrs (libtorch's holders are shared_ptrs too), MNIST is Fashion-MNIST, read from
// Debian's dataset-fashion-mnist folder (or the one given as the first argument), and the loader
// normalises and stacks the batches itself (libtorch maps Normalize and Stack transforms).
// Everything else, down to the function named train() and the variables named data, is the
// original. CTest runs it on the committed 2000-image subset (examples/CMakeLists.txt).
//
//   build/examples/example_mnist_port                                  # Debian's full set, 10 epochs
//   build/examples/example_mnist_port tests/data/fashion-mnist-subset  # 2000 images, a few seconds
//   build/examples/example_mnist_port <folder> 3                       # 3 epochs
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "ember/ember.h"

// Where to find the Fashion-MNIST dataset.
const char* kDataRoot = ember::data::kFashionMnistDir;

// The batch size for training.
const int64_t kTrainBatchSize = 64;

// The batch size for testing.
const int64_t kTestBatchSize = 1000;

// The number of epochs to train.
const int64_t kNumberOfEpochs = 10;

// After how many batches to log a new update with the loss value.
const int64_t kLogInterval = 10;

struct Net : ember::nn::Module {
  Net()
      : conv1(std::make_shared<ember::nn::Conv2d>(ember::nn::Conv2dOptions(1, 10, /*kernel_size=*/5))),
        conv2(std::make_shared<ember::nn::Conv2d>(ember::nn::Conv2dOptions(10, 20, /*kernel_size=*/5))),
        conv2_drop(std::make_shared<ember::nn::Dropout2d>()),
        fc1(std::make_shared<ember::nn::Linear>(320, 50)),
        fc2(std::make_shared<ember::nn::Linear>(50, 10)) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  ember::Tensor forward(ember::Tensor x) {
    x = ember::relu(ember::max_pool2d(conv1->forward(x), 2));
    x = ember::relu(ember::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = ember::relu(fc1->forward(x));
    x = ember::dropout(x, /*p=*/0.5, /*training=*/is_training());
    x = fc2->forward(x);
    return ember::log_softmax(x, /*dim=*/1);
  }

  std::shared_ptr<ember::nn::Conv2d> conv1;
  std::shared_ptr<ember::nn::Conv2d> conv2;
  std::shared_ptr<ember::nn::Dropout2d> conv2_drop;
  std::shared_ptr<ember::nn::Linear> fc1;
  std::shared_ptr<ember::nn::Linear> fc2;
};

template <typename DataLoader>
void train(size_t epoch, Net& model, ember::Device device, DataLoader& data_loader, ember::optim::Optimizer& optimizer,
           size_t dataset_size) {
  model.train();
  size_t batch_idx = 0;
  for (auto& batch : data_loader) {
    auto data = batch.images.to(device), targets = batch.labels.to(device);
    optimizer.zero_grad();
    auto output = model.forward(data);
    auto loss = ember::nll_loss(output, targets);
    EMBER_CHECK(!std::isnan(loss.template item<float>()), "the loss is NaN at batch " << batch_idx);
    loss.backward();
    optimizer.step();

    if (batch_idx++ % kLogInterval == 0) {
      std::printf("\rTrain Epoch: %zu [%5zu/%5zu] Loss: %.4f", epoch, batch_idx * batch.images.size(0), dataset_size,
                  loss.template item<float>());
    }
  }
}

template <typename DataLoader>
void test(Net& model, ember::Device device, DataLoader& data_loader, size_t dataset_size) {
  ember::NoGradGuard no_grad;
  model.eval();
  double test_loss = 0;
  int32_t correct = 0;
  for (const auto& batch : data_loader) {
    auto data = batch.images.to(device), targets = batch.labels.to(device);
    auto output = model.forward(data);
    test_loss += ember::nll_loss(output, targets,
                                 /*weight=*/{}, ember::Reduction::Sum)
                     .template item<float>();
    auto pred = output.argmax(1);
    correct += pred.eq(targets).sum().template item<int64_t>();
  }

  test_loss /= dataset_size;
  std::printf("\nTest set: Average loss: %.4f | Accuracy: %.3f\n", test_loss,
              static_cast<double>(correct) / dataset_size);
}

auto main(int argc, char* argv[]) -> int {
  const std::string data_root = argc > 1 ? argv[1] : kDataRoot;
  const int64_t epochs = argc > 2 ? std::atoll(argv[2]) : kNumberOfEpochs;
  ember::manual_seed(1);

  ember::Device device = ember::kCPU;
  if (ember::cuda::is_available()) {
    std::cout << "CUDA available! Training on GPU." << std::endl;
    device = ember::kCUDA;
  } else {
    std::cout << "Training on CPU." << std::endl;
  }

  Net model;
  model.to(device);

  // libtorch: MNIST(kDataRoot).map(Normalize<>(0.1307, 0.3081)).map(Stack<>()); the loader's
  // options carry the normalisation (Fashion-MNIST's statistics), and batches come stacked.
  const auto normalize = ember::data::Transforms().normalize({ember::data::kFashionMnistMean},
                                                             {ember::data::kFashionMnistStd});
  auto train_dataset = ember::data::load_fashion_mnist(data_root, ember::data::Split::train);
  const size_t train_dataset_size = train_dataset.size();
  auto train_loader = ember::data::DataLoader(
      std::move(train_dataset), ember::data::DataLoaderOptions(kTrainBatchSize).transforms(normalize));

  auto test_dataset = ember::data::load_fashion_mnist(data_root, ember::data::Split::test);
  const size_t test_dataset_size = test_dataset.size();
  auto test_loader = ember::data::DataLoader(std::move(test_dataset),
                                             ember::data::DataLoaderOptions(kTestBatchSize).transforms(normalize));

  ember::optim::SGD optimizer(model.parameters(), ember::optim::SgdOptions(0.01).momentum(0.5));

  for (size_t epoch = 1; epoch <= static_cast<size_t>(epochs); ++epoch) {
    train(epoch, model, device, train_loader, optimizer, train_dataset_size);
    test(model, device, test_loader, test_dataset_size);
  }
}
