#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/memory_session.h"
#include "apps/progress_bar.h"
#include "apps/report_table.h"
#include "apps/bench_train_command.h"
#include "apps/flag_words.h"
#include "apps/technique_options.h"
#include "apps/train_command.h"
#include "tests/apps/bench_run.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::apps;

namespace {
// Parses `args` (without the program name) as `ember <args>`.
TrainOptions parse_train(std::vector<std::string> args) {
  CLI::App app;
  TrainOptions options;
  add_train_command(app, options);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the arguments in reverse
  app.parse(reversed);
  return options;
}

// ember train of the MLP for two epochs on a small synthetic set, on the CPU.
TrainOptions mlp_run(const std::string& data, int64_t samples_per_class) {
  TrainOptions o;
  o.run.model = "mlp";
  o.data = data;
  o.epochs = 2;
  o.samples_per_class = samples_per_class;
  o.run.device = "cpu";
  return o;
}
}  // namespace

TEST_CASE("ember train parses its options", "[cli]") {
  const TrainOptions o = parse_train({"train", "--model", "mlp", "--data", "blobs", "--epochs", "3", "--batch", "32",
                                      "--lr", "0.05", "--momentum", "0.5", "--device", "cpu", "--threads", "1",
                                      "--seed", "9", "--json"});
  CHECK(o.data == "blobs");
  CHECK(o.epochs == 3);
  CHECK(o.run.batch == 32);
  CHECK(o.lr == 0.05);
  CHECK(o.momentum == 0.5);
  CHECK(o.run.device == "cpu");
  CHECK(o.run.threads == 1);
  CHECK(o.seed == 9);
  CHECK(o.run.json);
  CHECK(o.progress);
  CHECK_FALSE(parse_train({"train", "--no-progress"}).progress);
  const TrainOptions defaults = parse_train({"train"});
  CHECK(defaults.run.model == "convnet");
  CHECK(defaults.data == "fashion-mnist");
  CHECK(defaults.run.device.empty());  // chosen at run time: cuda when available
  CHECK_FALSE(defaults.run.json);
  CHECK_THROWS_AS(parse_train({"train", "--model", "nope"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse_train({"train", "--epochs", "0"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse_train({"train", "--data", "moons"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse_train({"train", "--batch", "010"}), CLI::ValidationError);  // CLI11 alone: octal 8
  CHECK_THROWS_AS(parse_train({"train", "--batch", "0x10"}), CLI::ValidationError);
}

TEST_CASE("ember train parses the memory-technique flags the out-of-memory advice names", "[cli]") {
  const TrainOptions o =
      parse_train({"train", "--checkpoint", "sqrt", "--precision", "fp16", "--accum", "4", "--batch", "256"});
  CHECK(o.run.technique.checkpoint == "sqrt");
  CHECK(o.run.technique.precision == "fp16");
  CHECK(o.run.technique.accum == 4);
  const train::TrainerOptions t = trainer_options(o.run.technique, o.run.batch);
  CHECK(t.precision == train::Precision::fp16);
  CHECK(t.checkpoint.kind == train::CheckpointPolicy::Kind::sqrt);
  CHECK(t.accum == 4);
  const TrainOptions defaults = parse_train({"train"});
  CHECK(defaults.run.technique.precision == "fp32");
  CHECK(defaults.run.technique.checkpoint == "none");
  CHECK(defaults.run.technique.accum == 1);
}

TEST_CASE("ember train --json trains the MLP and reports every epoch", "[cli][training]") {
  TrainOptions o = mlp_run("blobs", 100);
  o.run.json = true;
  std::ostringstream out;
  const TrainSummary s = run_train(o, out);
  const nlohmann::json report = nlohmann::json::parse(out.str());  // the whole output is one JSON document
  CHECK(report["command"] == "train");
  CHECK(report["device"] == "cpu");
  CHECK(report["samples"] == 300);
  REQUIRE(report["epochs"].size() == 2);
  CHECK(report["epochs"][1]["epoch"] == 2);
  for (const char* key : {"loss", "accuracy_percent", "seconds", "samples_per_s", "peak_mib"})
    CHECK(report["epochs"][0].contains(key));
  CHECK(report["final_accuracy"].get<double>() == s.final_accuracy);
  CHECK(s.final_accuracy >= 0.95);  // blobs are almost linearly separable
  CHECK(train_command(o, out) == 0);
  o.min_accuracy = 1.0;
  o.epochs = 1;
  o.lr = 0.0;  // no learning: random weights cannot be perfect on 3 classes
  CHECK(train_command(o, out) == 2);
}

TEST_CASE("ember train without --json prints a table", "[cli]") {
  TrainOptions o = mlp_run("spirals", 50);
  std::ostringstream out;
  run_train(o, out);
  const std::string text = out.str();
  CHECK(text.find("ember train: MLP") != std::string::npos);
  CHECK(text.find("train acc %") != std::string::npos);
  CHECK(text.find("final training accuracy") != std::string::npos);
  CHECK(text.find('\r') == std::string::npos);  // no progress bar outside a terminal
}

TEST_CASE("report table aligns columns and mirrors rows as JSON", "[cli]") {
  ReportTable table({{"epoch", "epoch", 5, 0}, {"loss", "loss", 8, 4}, {"name", "name", 4, 0}});
  CHECK(table.header() == "epoch      loss  name\n---------------------\n");
  CHECK(table.add_row({int64_t{1}, 0.43216, std::string("a")}) == "    1    0.4322     a\n");
  CHECK(table.add_row({int64_t{12}, 10.0, std::string("bcdef")}) == "   12   10.0000  bcdef\n");
  const nlohmann::json rows = table.json();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["epoch"] == 1);
  CHECK(rows[0]["loss"] == 0.43216);
  CHECK(rows[1]["name"] == "bcdef");
  test::expect_error_contains([&] { table.add_row({int64_t{1}}); }, {"report table", "1 cells", "3 columns"});
}

TEST_CASE("progress bar renders progress, loss, rate and ETA, disabled it prints nothing", "[cli]") {
  CHECK(ProgressBar::render("epoch 1/2", 50, 100, 0.25, 2000) ==
        "epoch 1/2 [##########..........] 50/100  loss 0.2500  2.0k items/s  ETA 0:00");
  CHECK(ProgressBar::render("e", 0, 10, 1.0, 0) == "e [....................] 0/10  loss 1.0000  0.0 items/s");
  std::ostringstream quiet;
  {
    ProgressBar bar(quiet, 10, "x", false);
    bar.update(5, 1.0);
    bar.finish();
  }
  CHECK(quiet.str().empty());
  std::ostringstream shown;
  ProgressBar bar(shown, 10, "x", true);
  bar.update(10, 0.5);
  CHECK(shown.str().rfind("\rx [####################] 10/10", 0) == 0);
  bar.finish();
  CHECK(shown.str().back() == '\r');
}

TEST_CASE("ember train --memory-limit rejects a size that is not one", "[cli]") {
  // inf and 1e30 used to be read by strtod and silently removed the limit (memory/byte_size.h).
  for (const char* text : {"inf", "1e30", "-1", "64MiB!"}) {
    MemoryOptions o;
    o.limit = text;
    test::expect_error_contains([&] { MemorySession session(o, kCPU, "test"); },
                                {"--memory-limit", std::string("'") + text + "'", "512MiB"});
  }
}

TEST_CASE("ember train rejects nan and inf for its fractional options", "[cli]") {
  // CLI11's Range and NonNegativeNumber let nan through (every comparison with nan is false):
  // --min-accuracy nan switched the accuracy check off, since no accuracy is below nan.
  for (const char* option : {"--min-accuracy", "--lr", "--momentum", "--weight-decay", "--noise"})
    for (const char* text : {"nan", "inf", "-inf", "NaN", "1e400"}) {
      INFO(option << " " << text);
      CHECK_THROWS_AS(parse_train({"train", option, text}), CLI::ValidationError);
    }
  CHECK(parse_train({"train", "--min-accuracy", "0.5", "--noise", "1e-3"}).min_accuracy == 0.5);
}

TEST_CASE("ember bench-train prints a table, or with --json the peaks by category", "[cli]") {
  BenchTrainOptions o = test::bench_run("lenet5", 8, 1, 1);
  o.run.technique.checkpoint = "sqrt";
  o.run.technique.accum = 2;
  std::ostringstream table;
  const nlohmann::ordered_json r = bench_train_command(o, table);
  CHECK(table.str().find("checkpoint sqrt (4 segments), accum 2") != std::string::npos);
  CHECK(table.str().find("activation") != std::string::npos);
  CHECK(r["checkpoint_segments"] == 4);
  CHECK(r["peak_bytes"].get<int64_t>() >= r["peak_bytes_by_category"]["activation"].get<int64_t>());
  CHECK(r["peak_bytes_by_category"]["activation"].get<int64_t>() > 0);
  o.run.json = true;
  std::ostringstream line;
  bench_train_command(o, line);
  CHECK(nlohmann::json::parse(line.str())["accum"] == 2);
}

TEST_CASE("technique flags: a bad value fails before training, in the flags' words", "[cli]") {
  TechniqueOptions t;
  t.accum = 3;
  test::expect_error_contains([&] { trainer_options(t, 64); }, {"--accum 3", "does not divide", "--batch 64"});
  t.accum = 0;
  test::expect_error_contains([&] { trainer_options(t, 64); }, {"--accum 0", "at least 1"});
  t = {};
  t.checkpoint = "0";
  test::expect_error_contains([&] { trainer_options(t, 64); }, {"--checkpoint", "0 segments", "at least 1"});
  t.checkpoint = "often";
  test::expect_error_contains([&] { trainer_options(t, 64); }, {"--checkpoint", "'often'", "none, sqrt"});
  t = {};
  t.precision = "fp8";
  test::expect_error_contains([&] { trainer_options(t, 64); }, {"--precision", "'fp8'", "fp32 or fp16"});
  CHECK(flag_words("TrainerOptions: accum = 3 does not divide batch = 64") == "--accum 3 does not divide --batch 64");
  CHECK(flag_words("gradient checkpointing (checkpoint = sqrt), fp16 (precision = fp16)") ==
        "gradient checkpointing (--checkpoint sqrt), fp16 (--precision fp16)");
}
