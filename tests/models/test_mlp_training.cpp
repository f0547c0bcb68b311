#include <memory>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "core/generator.h"
#include "data/synthetic.h"
#include "models/metrics.h"
#include "models/mlp.h"
#include "models/zoo.h"
#include "optim/sgd.h"
#include "tests/support/expect.h"

using namespace ember;
using test::expect_error_contains;

namespace {

// Full-batch SGD on spirals until `target` training accuracy or `max_steps`.
struct TrainResult {
  int steps = 0;
  double first_loss = 0;
  double last_loss = 0;
  double accuracy = 0;
};

TrainResult train_until(nn::Module& model, const data::Dataset& d, double target, int max_steps) {
  optim::SGD sgd(model.parameters(), optim::SgdOptions(0.2).momentum(0.9));
  TrainResult r;
  constexpr int kCheckEvery = 25;
  for (r.steps = 1; r.steps <= max_steps; ++r.steps) {
    Tensor logits = model.forward(d.images);
    Tensor loss = cross_entropy(logits, d.labels);
    (r.steps == 1 ? r.first_loss : r.last_loss) = loss.item<float>();
    sgd.zero_grad();
    loss.backward();
    sgd.step();
    if (r.steps % kCheckEvery == 0) {
      NoGradGuard no_grad;
      r.accuracy = models::accuracy(model.forward(d.images), d.labels);
      if (r.accuracy >= target) break;
    }
  }
  return r;
}

}  // namespace

TEST_CASE("MLP structure: Linear-ReLU-...-Linear, Flatten for image shapes", "[mlp]") {
  nn::MLP mlp(2, {8, 4}, 3);
  CHECK(mlp.size() == 5);
  CHECK(mlp.str() ==
        "MLP(\n  (0): Linear(in=2, out=8)\n  (1): ReLU()\n  (2): Linear(in=8, out=4)\n  (3): ReLU()\n"
        "  (4): Linear(in=4, out=3)\n)");
  nn::MLP image_mlp(Shape{1, 28, 28}, {16}, 10);
  CHECK(std::string(image_mlp[0]->name()) == "Flatten");
  CHECK(image_mlp.forward(zeros({5, 1, 28, 28})).shape() == Shape{5, 10});
  nn::MLP linear_only(3, {}, 2);
  CHECK(linear_only.size() == 1);
}

TEST_CASE("accuracy counts argmax hits", "[mlp]") {
  Tensor logits = from_vector<float>({0.1f, 0.9f, 0, 2, 1, 0, -1, -2, -0.5f, 3, 3.5f, 0}, {4, 3});
  Tensor labels = from_vector<int64_t>({1, 0, 2, 0}, {4});
  // argmax rows: 1, 0, 2 (the -0.5), 1 -> hits 1, 1, 1, 0
  CHECK(models::count_correct(logits, labels) == 3);
  CHECK(models::accuracy(logits, labels) == 0.75);
  CHECK(models::accuracy(zeros({0, 3}), zeros({0}, kInt64)) == 0.0);
  expect_error_contains([&] { models::accuracy(logits, from_vector<int64_t>({1, 0}, {2})); },
                        {"accuracy", "[4, 3]", "[2]"});
}

TEST_CASE("the zoo builds an MLP by name and names the known models otherwise", "[mlp]") {
  auto model = models::make_model("mlp", Shape{2, 1, 1}, 3);
  CHECK(std::string(model->name()) == "MLP");
  CHECK(model->forward(zeros({4, 2, 1, 1})).shape() == Shape{4, 3});
  expect_error_contains([] { models::make_model("vgg99", Shape{2}, 3); }, {"unknown model", "vgg99", "mlp"});
}

TEST_CASE("synthetic data is deterministic per seed and well formed", "[mlp]") {
  data::SyntheticOptions o;
  o.samples_per_class = 50;
  o.classes = 4;
  o.seed = 3;
  const data::Dataset a = data::make_spirals(o);
  const data::Dataset b = data::make_spirals(o);
  CHECK(a.images.shape() == Shape{200, 2, 1, 1});
  CHECK(a.labels.shape() == Shape{200});
  CHECK(a.num_classes == 4);
  CHECK(a.images.to_vector<float>() == b.images.to_vector<float>());
  o.seed = 4;
  CHECK(data::make_spirals(o).images.to_vector<float>() != a.images.to_vector<float>());
  CHECK(data::make_synthetic("blobs", o).size() == 200);
  expect_error_contains([&] { data::make_synthetic("moons", o); }, {"moons", "spirals", "blobs"});
}

TEST_CASE("MLP learns the spirals: loss falls and training accuracy reaches 95%", "[mlp][training]") {
  manual_seed(0);
  data::SyntheticOptions o;  // 3 classes x 300 points
  const data::Dataset spirals = data::make_spirals(o);
  nn::MLP mlp(Shape{2, 1, 1}, {64, 64}, 3);
  const TrainResult r = train_until(mlp, spirals, 0.95, 1500);
  INFO("steps " << r.steps << ", loss " << r.first_loss << " -> " << r.last_loss << ", accuracy " << r.accuracy);
  CHECK(r.accuracy >= 0.95);
  CHECK(r.last_loss < 0.5 * r.first_loss);
  // A linear model cannot separate the arms: this bound shows the hidden layers matter.
  manual_seed(0);
  nn::MLP linear_only(Shape{2, 1, 1}, {}, 3);
  CHECK(train_until(linear_only, spirals, 0.95, 300).accuracy < 0.7);
}
