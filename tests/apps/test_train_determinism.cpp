// On the CPU the same seed gives bitwise the same training: same shuffles, same
// initial weights, same summation orders (fixed-order reductions, fixed BLAS
// partitioning for a fixed thread count).
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/train_command.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::apps;

namespace {

nlohmann::json train_once(uint64_t seed) {
  TrainOptions o;
  o.run.model = "lenet5";
  o.data = "fashion-mnist";
  o.data_dir = std::string(EMBER_TEST_DATA_DIR) + "/fashion-mnist-subset";
  o.epochs = 2;
  o.run.batch = 128;
  o.run.threads = 2;
  o.run.device = "cpu";
  o.seed = seed;
  o.run.json = true;
  std::ostringstream out;
  run_train(o, out);
  return nlohmann::json::parse(out.str());
}

}  // namespace

TEST_CASE("the same seed gives bitwise the same loss curve on the CPU", "[train][determinism]") {
  const nlohmann::json a = train_once(3), b = train_once(3), c = train_once(4);
  REQUIRE(a["epochs"].size() == 2);
  for (size_t e = 0; e < 2; ++e) {
    INFO("epoch " << e + 1);
    CHECK(a["epochs"][e]["loss"].get<double>() == b["epochs"][e]["loss"].get<double>());
    CHECK(a["epochs"][e]["test_accuracy_percent"].get<double>() == b["epochs"][e]["test_accuracy_percent"].get<double>());
  }
  CHECK(a["final_loss"].get<double>() == b["final_loss"].get<double>());
  CHECK(a["final_loss"].get<double>() != c["final_loss"].get<double>());  // the seed matters
}
