// A libtorch tutorial-style program, ported: a CNN of your own with a skip connection
// that concatenates, a dataset of your own, Adam with parameter groups, saving and
// reloading, and resuming a run. CTest builds and runs it (examples/CMakeLists.txt).
//
// The data: 12x12 images with one bright bar — horizontal, vertical, or one of the two
// diagonals (4 classes) — at a random place, plus noise.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "ember/ember.h"


namespace {

constexpr int64_t kSide = 12;

// A dataset of your own: size() and get(i), as libtorch's torch::data::Dataset.
class BarsDataset : public ember::data::SampleDataset {
 public:
  explicit BarsDataset(int64_t size) : size_(size) {}
  int64_t size() const override { return size_; }
  ember::data::Sample get(int64_t i) const override {
    const int64_t label = i % 4;
    const int64_t at = 2 + (i * 7) % (kSide - 4);  // where the bar crosses
    std::vector<float> pixels(kSide * kSide);
    for (int64_t y = 0; y < kSide; ++y)
      for (int64_t x = 0; x < kSide; ++x) {
        const bool on = label == 0 ? y == at : label == 1 ? x == at : label == 2 ? x - y == at - 6 : x + y == at + 5;
        const float noise = 0.3f * std::sin(static_cast<float>(i * 131 + y * 17 + x * 29));  // deterministic noise
        pixels[static_cast<size_t>(y * kSide + x)] = (on ? 1.0f : 0.0f) + noise;
      }
    return {ember::from_vector<float>(pixels, {1, kSide, kSide}), label};
  }

 private:
  int64_t size_;
};

// A module of your own: two convolutions whose outputs are concatenated (a DenseNet-style skip).
class SkipNet : public ember::nn::Module {
 public:
  SkipNet() {
    using ember::nn::Conv2dOptions;
    conv1_ = register_module("conv1", std::make_shared<ember::nn::Conv2d>(Conv2dOptions(1, 8, 3).padding(1)));
    conv2_ = register_module("conv2", std::make_shared<ember::nn::Conv2d>(Conv2dOptions(8, 8, 3).padding(1)));
    bn_ = register_module("bn", std::make_shared<ember::nn::BatchNorm2d>(16));
    pool_ = register_module("pool", std::make_shared<ember::nn::MaxPool2d>(2));
    fc_ = register_module("fc", std::make_shared<ember::nn::Linear>(16 * (kSide / 2) * (kSide / 2), 4));
  }

 protected:
  ember::Tensor forward_impl(const ember::Tensor& x) override {
    const ember::Tensor h1 = ember::relu(conv1_->forward(x));
    const ember::Tensor h2 = ember::relu(conv2_->forward(h1));
    const ember::Tensor both = ember::cat({h1, h2}, 1);  // [B, 16, 12, 12]
    const ember::Tensor pooled = pool_->forward(bn_->forward(both));
    return fc_->forward(pooled.reshape({pooled.size(0), -1}));
  }

 private:
  std::shared_ptr<ember::nn::Conv2d> conv1_, conv2_;
  std::shared_ptr<ember::nn::BatchNorm2d> bn_;
  std::shared_ptr<ember::nn::MaxPool2d> pool_;
  std::shared_ptr<ember::nn::Linear> fc_;
};

// Adam with two groups: weights decay, biases and BatchNorm's parameters do not.
std::unique_ptr<ember::optim::AdamW> make_optimizer(const ember::nn::Module& net) {
  return std::make_unique<ember::optim::AdamW>(ember::optim::decay_groups(net.named_parameters(), 1e-2),
                                               ember::optim::AdamOptions(3e-3));
}

// One epoch; returns the mean loss.
double train_epoch(ember::nn::Module& net, ember::optim::Optimizer& opt, ember::data::DataLoader& loader) {
  net.train();
  double sum = 0.0;
  int64_t seen = 0;
  for (ember::data::Batch& b : loader) {
    opt.zero_grad();
    ember::Tensor loss = ember::nll_loss(ember::log_softmax(net.forward(b.images), 1), b.labels);
    loss.backward();
    opt.step();
    sum += loss.item<double>() * static_cast<double>(b.size());
    seen += b.size();
  }
  return sum / static_cast<double>(seen);
}

double accuracy(ember::nn::Module& net, ember::data::DataLoader& loader) {
  ember::NoGradGuard no_grad;
  net.eval();
  int64_t correct = 0, seen = 0;
  for (ember::data::Batch& b : loader) {
    correct += ember::models::count_correct(net.forward(b.images), b.labels);
    seen += b.size();
  }
  return static_cast<double>(correct) / static_cast<double>(seen);
}

bool same_parameters(const ember::nn::Module& a, const ember::nn::Module& b) {
  const std::vector<ember::Tensor> pa = a.parameters(), pb = b.parameters();
  for (size_t i = 0; i < pa.size(); ++i)
    if (pa[i].to_vector<float>() != pb[i].to_vector<float>()) return false;
  return true;
}

}  // namespace

int main() {
  ember::manual_seed(0);
  auto train_set = std::make_shared<BarsDataset>(2048);
  auto test_set = std::make_shared<BarsDataset>(512);
  const auto options = [] { return ember::data::DataLoaderOptions().batch_size(64).shuffle(true).seed(1); };
  ember::data::DataLoader train_loader(train_set, options());
  ember::data::DataLoader test_loader(test_set, ember::data::DataLoaderOptions().batch_size(256));

  auto net = std::make_shared<SkipNet>();
  std::unique_ptr<ember::optim::AdamW> opt = make_optimizer(*net);
  std::printf("epoch 1: loss %.4f\n", train_epoch(*net, *opt, train_loader));

  // Save, as torch::save(model) and torch::save(optimizer) would.
  ember::train::save_weights("libtorch_port.safetensors", *net);
  ember::data::save_safetensors("libtorch_port.optimizer.safetensors", opt->state_dict());

  // Reload into a fresh model and optimizer, and resume at epoch 2 with the same data order.
  ember::manual_seed(42);  // other initial weights, overwritten by the load
  auto resumed = std::make_shared<SkipNet>();
  ember::train::load_weights("libtorch_port.safetensors", *resumed);
  std::unique_ptr<ember::optim::AdamW> resumed_opt = make_optimizer(*resumed);
  resumed_opt->load_state_dict(ember::data::load_safetensors("libtorch_port.optimizer.safetensors"));
  ember::data::DataLoader resumed_loader(train_set, options());
  resumed_loader.set_next_epoch(1);

  for (int epoch = 2; epoch <= 3; ++epoch) {
    const double a = train_epoch(*net, *opt, train_loader);
    const double b = train_epoch(*resumed, *resumed_opt, resumed_loader);
    std::printf("epoch %d: loss %.4f (resumed copy %.4f)\n", epoch, a, b);
  }
  std::printf("test accuracy %.4f; the resumed copy matches the uninterrupted run: %s\n", accuracy(*net, test_loader),
              same_parameters(*net, *resumed) ? "yes" : "no");
  return 0;
}
