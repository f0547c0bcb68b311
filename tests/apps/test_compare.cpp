// ember compare over two real bench-train runs written with --memory-json.
#include <catch2/catch.hpp>
#include <filesystem>

#include "apps/bench_train_command.h"
#include "apps/compare_command.h"
#include "tests/apps/bench_run.h"
#include "tests/data/temp_dir.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::apps;

TEST_CASE("ember compare shows what fp16 moved between two recorded runs", "[compare]") {
  test::TempDir dir;
  BenchTrainOptions run = test::bench_run("lenet5", 32, 2, 1);
  run.run.json = true;
  std::ostringstream ignored;
  run.memory.run_path = dir.file("fp32.json");
  bench_train_command(run, ignored);
  run.run.technique.precision = "fp16";
  run.memory.run_path = dir.file("fp16.json");
  bench_train_command(run, ignored);

  CompareOptions o;
  o.a = dir.file("fp32.json");
  o.b = dir.file("fp16.json");
  o.output = dir.file("compare.html");
  std::ostringstream text;
  compare_command(o, text);
  CHECK(text.str().find("activation (own peak)") != std::string::npos);
  CHECK(text.str().find("time per step") != std::string::npos);
  CHECK(std::filesystem::file_size(o.output) > 1000);

  o.json = true;
  std::ostringstream json_text;
  const nlohmann::ordered_json j = compare_command(o, json_text);
  CHECK(j["b"]["run"]["precision"] == "fp16");
  bool saw_activation = false, saw_masters = false;
  for (const auto& row : j["rows"]) {
    if (row["what"] == "activation (own peak)") {
      saw_activation = true;
      CHECK(row["b"].get<double>() < 0.6 * row["a"].get<double>());  // f16 activations: half the bytes
    }
    if (row["what"] == "master_weights (own peak)") {
      saw_masters = true;
      CHECK(row["a"].get<double>() == 0.0);
      CHECK(row["ratio"] == "new");
    }
  }
  CHECK(saw_activation);
  CHECK(saw_masters);
  o.a = dir.file("missing.json");
  test::expect_error_contains([&] { compare_command(o, json_text); }, {"missing.json"});
}
