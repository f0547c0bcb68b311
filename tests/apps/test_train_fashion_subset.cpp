#include <cmath>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/eval_command.h"
#include "apps/train_command.h"
#include "apps/train_setup.h"
#include "core/generator.h"
#include "data/safetensors.h"
#include "kernels/factories.h"
#include "models/linear.h"
#include "models/zoo.h"
#include "train/weights_file.h"
#include "tests/data/temp_dir.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::apps;
using ember::train::load_weights;
using ember::train::save_weights;
using test::expect_error_contains;

namespace {
const std::string kSubset = std::string(EMBER_TEST_DATA_DIR) + "/fashion-mnist-subset";

// `ember eval --json` of LeNet-5 weights on the subset's test images.
nlohmann::json eval_lenet5(const std::string& weights) {
  EvalOptions e;
  e.model = "lenet5";
  e.load = weights;
  e.data_dir = kSubset;
  e.device = "cpu";
  e.json = true;
  std::ostringstream out;
  REQUIRE(eval_command(e, out) == 0);
  return nlohmann::json::parse(out.str());
}
}  // namespace

TEST_CASE("ember train: LeNet-5 learns the Fashion-MNIST subset in one epoch, eval reads the saved weights",
          "[train]") {
  test::TempDir dir;
  TrainOptions o;
  o.run.model = "lenet5";
  o.data = "fashion-mnist";
  o.data_dir = kSubset;  // 2000 training, 250 test images
  o.epochs = 1;
  o.run.batch = 32;  // 63 steps: the recipe's 64 would give too few for one epoch
  o.run.optimizer = "adam";  // learns faster than the recipe's SGD in 63 steps: ~68% test accuracy, not ~54%
  o.lr = 2e-3;
  o.weight_decay = 0.0;
  o.schedule = "constant";
  o.run.threads = 1;  // a loaded CI machine: no OpenMP barrier spinning
  o.run.device = "cpu";
  o.run.json = true;
  o.save = dir.file("lenet5.safetensors");
  std::ostringstream out;
  const TrainSummary s = run_train(o, out);
  const nlohmann::json report = nlohmann::json::parse(out.str());
  CHECK(report["samples"] == 2000);
  CHECK(report["optimizer"]["name"] == "adam");  // the options above win over the recipe
  CHECK(report["epochs"][0].contains("test_accuracy_percent"));
  CHECK(report["peak_mib_by_category"][0]["parameter"].get<double>() > 0.0);
  // Chance is log(10) = 2.30 loss and 10% accuracy; one epoch of 63 steps gets well past both.
  CHECK(s.final_loss < 0.8 * std::log(10.0));
  CHECK(s.final_accuracy > 0.5);

  const nlohmann::json eval = eval_lenet5(o.save);
  CHECK(eval["samples"] == 250);
  CHECK(eval["accuracy"].get<double>() == Approx(s.final_accuracy));  // same weights, same test set
}

TEST_CASE("load_weights names the tensor and both shapes on a mismatch", "[train]") {
  test::TempDir dir;
  manual_seed(0);
  auto small = std::make_shared<nn::Linear>(4, 3);
  auto other = std::make_shared<nn::Linear>(5, 3);
  save_weights(dir.file("w.safetensors"), *small);
  expect_error_contains([&] { load_weights(dir.file("w.safetensors"), *other); },
                        {"weight", "[3, 4]", "[3, 5]"});
  auto lenet = models::make_model("lenet5", Shape{1, 28, 28}, 10);
  expect_error_contains([&] { load_weights(dir.file("w.safetensors"), *lenet); }, {"0.weight", "no tensor"});
  auto copy = std::make_shared<nn::Linear>(4, 3);
  load_weights(dir.file("w.safetensors"), *copy);
  test::expect_close(copy->weight(), small->weight(), 0.0, "load_weights");  // bit-exact round trip
}

TEST_CASE("ember train --precision fp16: LeNet-5 converges on the subset, its f16 weights save and load", "[train]") {
  test::TempDir dir;
  TrainOptions o;
  o.run.model = "lenet5";
  o.data = "fashion-mnist";
  o.data_dir = kSubset;
  o.epochs = 1;
  o.run.batch = 32;
  o.run.optimizer = "adam";
  o.lr = 2e-3;
  o.weight_decay = 0.0;
  o.schedule = "constant";
  o.run.threads = 1;
  o.run.device = "cpu";
  o.run.json = true;
  o.run.technique.precision = "fp16";
  o.save = dir.file("lenet5-f16.safetensors");
  std::ostringstream out;
  const TrainSummary s = run_train(o, out);
  const nlohmann::json report = nlohmann::json::parse(out.str());
  CHECK(report["precision"] == "fp16");
  CHECK(report["loss_scale"].get<double>() >= 1.0);
  CHECK(report["peak_mib_by_category"][0]["master_weights"].get<double>() > 0.0);
  // The same bar as the fp32 run above: well past chance after 63 steps.
  CHECK(s.final_loss < 0.8 * std::log(10.0));
  CHECK(s.final_accuracy > 0.5);

  // The file holds F16 tensors; loading them into an f16 model is bit-exact, and eval (fp32)
  // widens them and scores the same test set as the run did, to f16 rounding.
  const std::map<std::string, Tensor> file = data::load_safetensors(o.save);
  for (const auto& [name, t] : train::model_entries(file))
    if (name.find("running") == std::string::npos && name.find("num_batches") == std::string::npos)
      CHECK(t.dtype() == kFloat16);
  auto reloaded = models::make_model("lenet5", Shape{1, 28, 28}, 10);
  reloaded->parameters_to(kFloat16);
  load_weights(o.save, *reloaded);
  for (const Tensor& p : reloaded->parameters()) CHECK(p.dtype() == kFloat16);
  CHECK(eval_lenet5(o.save)["accuracy"].get<double>() == Approx(s.final_accuracy).margin(0.02));
}
