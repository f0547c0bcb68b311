#pragma once
// `ember eval`: test accuracy and loss of saved weights, and `ember bench-train`:
// training images/s on synthetic batches (the same loop as bench/peers/libtorch_train.cpp).
//
//   ember eval --model lenet5 --load lenet5.safetensors            # Fashion-MNIST test set
//   ember bench-train --model convnet --batch 64 --threads 2 --steps 60 --warmup 10
//   {"peer":"ember","model":"convnet","batch":64,"threads":2,"images_per_s":812.3}
#include <cstdint>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace ember::apps {

struct EvalOptions {
  std::string model = "convnet";
  std::string load;
  std::string data = "fashion-mnist";
  std::string data_dir;
  std::string device;
  int threads = 0;
  bool json = false;
};

struct BenchTrainOptions {
  std::string model = "lenet5";
  int64_t batch = 64;
  int threads = 1;
  int steps = 100;
  int warmup = 10;
  std::string device = "cpu";  // cuda: the same benchmark on the GPU (bench/peers/pytorch_train.py is its peer)
};

CLI::App* add_eval_command(CLI::App& app, EvalOptions& options);
int eval_command(const EvalOptions& options, std::ostream& out);
CLI::App* add_bench_train_command(CLI::App& app, BenchTrainOptions& options);
// Returns the measured images/s and prints the JSON line.
double bench_train_command(const BenchTrainOptions& options, std::ostream& out);

}  // namespace ember::apps
