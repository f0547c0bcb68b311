// The peer for ember's CPU training speed: the same LeNet-5, ConvNet and ResNet-20 (see
// docs/models.md) trained with libtorch's C++ frontend on the same synthetic
// batches, reporting training images/s. bench/peers/compare_cpu.sh runs it
// interleaved with `ember bench-train`.
//
//   libtorch_train --model convnet --batch 64 --threads 2 --steps 60
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct LeNet5 : torch::nn::Module {
  torch::nn::Conv2d c1{torch::nn::Conv2dOptions(1, 6, 5).padding(2)}, c2{torch::nn::Conv2dOptions(6, 16, 5)};
  torch::nn::Linear f1{400, 120}, f2{120, 84}, f3{84, 10};
  LeNet5() {
    register_module("c1", c1);
    register_module("c2", c2);
    register_module("f1", f1);
    register_module("f2", f2);
    register_module("f3", f3);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(c1(x)), 2);
    x = torch::max_pool2d(torch::relu(c2(x)), 2);
    x = x.flatten(1);
    return f3(torch::relu(f2(torch::relu(f1(x)))));
  }
};

struct ConvNet : torch::nn::Module {
  torch::nn::Sequential features{
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 3).padding(1)), torch::nn::BatchNorm2d(32), torch::nn::ReLU(),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 32, 3).padding(1)), torch::nn::BatchNorm2d(32), torch::nn::ReLU(),
      torch::nn::MaxPool2d(2),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3).padding(1)), torch::nn::BatchNorm2d(64), torch::nn::ReLU(),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 64, 3).padding(1)), torch::nn::BatchNorm2d(64), torch::nn::ReLU(),
      torch::nn::MaxPool2d(2)};
  torch::nn::Linear f1{3136, 128}, f2{128, 10};
  ConvNet() {
    register_module("features", features);
    register_module("f1", f1);
    register_module("f2", f2);
  }
  torch::Tensor forward(torch::Tensor x) { return f2(torch::relu(f1(features->forward(x).flatten(1)))); }
};

// He et al.'s CIFAR ResNet-20 as models/resnet.cpp builds it: no conv bias, a 1x1 conv + BN
// shortcut where the shape changes (stride 2 or more channels), global average pool, Linear.
struct BasicBlock : torch::nn::Module {
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential shortcut{nullptr};
  BasicBlock(int64_t in, int64_t out, int64_t stride) {
    conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(out));
    conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(out, out, 3).padding(1).bias(false)));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(out));
    if (stride != 1 || in != out)
      shortcut = register_module(
          "shortcut", torch::nn::Sequential(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
                                            torch::nn::BatchNorm2d(out)));
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor h = torch::relu(bn1(conv1(x)));
    return torch::relu(bn2(conv2(h)) + (shortcut ? shortcut->forward(x) : x));
  }
};

struct ResNet20 : torch::nn::Module {
  torch::nn::Conv2d stem{torch::nn::Conv2dOptions(1, 16, 3).padding(1).bias(false)};
  torch::nn::BatchNorm2d bn{16};
  std::vector<std::shared_ptr<BasicBlock>> blocks;
  torch::nn::Linear fc{64, 10};
  ResNet20() {
    register_module("stem", stem);
    register_module("bn", bn);
    int64_t channels = 16;
    for (int64_t width : {16, 32, 64})
      for (int i = 0; i < 3; ++i) {
        const int64_t stride = (i == 0 && width != 16) ? 2 : 1;
        blocks.push_back(register_module("block" + std::to_string(blocks.size()),
                                         std::make_shared<BasicBlock>(channels, width, stride)));
        channels = width;
      }
    register_module("fc", fc);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn(stem(x)));
    for (auto& b : blocks) x = b->forward(x);
    return fc(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }
};

template <class Model>
double images_per_second(Model& model, int batch, int warmup, int steps) {
  torch::manual_seed(0);
  constexpr int kPool = 8;  // distinct batches, cycled
  std::vector<torch::Tensor> images, labels;
  for (int i = 0; i < kPool; ++i) {
    images.push_back(torch::randn({batch, 1, 28, 28}));
    labels.push_back(torch::randint(0, 10, {batch}, torch::kLong));
  }
  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  model.train();
  auto step = [&](int i) {
    optimizer.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model.forward(images[i % kPool]), labels[i % kPool]);
    loss.backward();
    optimizer.step();
  };
  for (int i = 0; i < warmup; ++i) step(i);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step(i);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(batch) * steps / seconds;
}

std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == "--" + name) return argv[i + 1];
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string model = arg(argc, argv, "model", "lenet5");
  const int batch = std::stoi(arg(argc, argv, "batch", "64"));
  const int threads = std::stoi(arg(argc, argv, "threads", "1"));
  const int steps = std::stoi(arg(argc, argv, "steps", "100"));
  const int warmup = std::stoi(arg(argc, argv, "warmup", "10"));
  torch::set_num_threads(threads);
  double rate = 0;
  if (model == "lenet5") {
    LeNet5 net;
    rate = images_per_second(net, batch, warmup, steps);
  } else if (model == "convnet") {
    ConvNet net;
    rate = images_per_second(net, batch, warmup, steps);
  } else if (model == "resnet20") {
    ResNet20 net;
    rate = images_per_second(net, batch, warmup, steps);
  } else {
    std::fprintf(stderr, "libtorch_train: unknown model '%s' (lenet5, convnet or resnet20)\n", model.c_str());
    return 2;
  }
  std::printf("{\"peer\": \"libtorch\", \"model\": \"%s\", \"batch\": %d, \"threads\": %d, \"images_per_s\": %.1f}\n",
              model.c_str(), batch, threads, rate);
  return 0;
}
