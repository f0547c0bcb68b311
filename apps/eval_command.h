#pragma once
// `ember eval`: test accuracy and loss of saved weights.
//
//   ember eval --model lenet5 --load lenet5.safetensors            # Fashion-MNIST test set
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

CLI::App* add_eval_command(CLI::App& app, EvalOptions& options);
int eval_command(const EvalOptions& options, std::ostream& out);

}  // namespace ember::apps
