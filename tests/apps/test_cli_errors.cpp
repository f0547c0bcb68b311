// Every flag of every `ember` subcommand given a bad value: the message is a sentence that names
// the flag and what is allowed (apps/cli_checks.h), or ember's error naming the value or file,
// before any training starts. The last test fails when a flag is added without a row here.
#include <CLI/CLI.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/command_line.h"
#include "core/error.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::apps;

namespace {

struct BadValue {
  std::vector<std::string> args;       // after `ember`
  std::vector<std::string> fragments;  // the message must contain each
};

// The message `ember <args>` fails with ("" when it does not fail).
std::string error_of(const std::vector<std::string>& args) {
  CommandLine cli;
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the arguments in reverse
  try {
    cli.app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return cli_error_text(e);
  }
  std::ostringstream out;
  try {
    cli.run(out);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Small synthetic runs, so that a value that were wrongly accepted costs a second, not an epoch.
const std::vector<std::string> kTrain = {"train", "--model", "mlp", "--data", "spirals", "--epochs", "1",
                                         "--device", "cpu", "--threads", "1", "--json"};

std::vector<std::string> train_with(std::vector<std::string> extra) {
  std::vector<std::string> args = kTrain;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

const std::vector<BadValue>& bad_values() {
  static const std::vector<BadValue> table = {
      // ember train: checked while parsing
      {train_with({"--model", "vgg"}), {"--model must be one of mlp, lenet5, convnet, resnet20; got vgg"}},
      {train_with({"--data", "moons"}), {"--data must be one of fashion-mnist, spirals, blobs; got moons"}},
      {train_with({"--optimizer", "lamb"}), {"--optimizer must be one of sgd, adam, adamw; got lamb"}},
      {train_with({"--save-every", "0"}), {"--save-every must be a positive integer, got 0"}},
      {train_with({"--samples-per-class", "-5"}), {"--samples-per-class must be a positive integer, got -5"}},
      {train_with({"--classes", "1"}), {"--classes must be a whole number of classes from 2 to 1000, got 1"}},
      {train_with({"--noise", "nan"}), {"--noise must be a number >= 0, got nan"}},
      {train_with({"--epochs", "0"}), {"--epochs must be a positive integer, got 0"}},
      {train_with({"--batch", "0"}), {"--batch must be a positive integer, got 0"}},
      {train_with({"--batch", "1.5"}), {"--batch must be a positive integer, got 1.5"}},
      {train_with({"--batch", "99999999999"}), {"--batch must be a positive integer up to 2147483647"}},
      {train_with({"--lr", "inf"}), {"--lr must be a number >= 0, got inf"}},
      {train_with({"--momentum", "1.5"}), {"--momentum must be a number from 0 to 1, got 1.5"}},
      {train_with({"--weight-decay", "-1"}), {"--weight-decay must be a number >= 0, got -1"}},
      {train_with({"--schedule", "linear"}), {"--schedule must be one of constant, step, cosine, onecycle"}},
      {train_with({"--threads", "-2"}), {"--threads must be an integer >= 0, got -2"}},
      {train_with({"--threads", "1000000"}), {"--threads must be at most", "per CPU core", "got 1000000"}},
      {train_with({"--seed", "-1"}), {"--seed must be a whole number from 0 to 18446744073709551615, got -1"}},
      {train_with({"--min-accuracy", "90"}), {"--min-accuracy must be a number from 0 to 1, got 90"}},
      {train_with({"--memory-steps", "0"}), {"--memory-steps must be a positive integer, got 0"}},
      {train_with({"--precision", "fp8"}), {"--precision must be one of fp32, fp16; got fp8"}},
      {train_with({"--accum", "0"}), {"--accum must be a positive integer, got 0"}},
      {train_with({"--zero", "3"}), {"--zero must be a ZeRO stage from 0 to 2, got 3"}},
      // ember train: checked before the data loads
      {{"train", "--model", "mlp", "--data", "spirals", "--device", "gpu"}, {"gpu", "cpu, cuda or cuda:N"}},
      {train_with({"--checkpoint", "0"}), {"--checkpoint", "0 segments"}},
      {train_with({"--memory-limit", "inf"}), {"--memory-limit", "inf"}},
      {train_with({"--memory-budget", "1e30"}), {"--memory-budget", "1e30"}},
      {train_with({"--bucket-size", "0"}), {"--bucket-size 0 must be at least 1 byte"}},
      {train_with({"--memory-budget", "64MiB", "--zero", "1"}), {"--memory-budget chooses", "--zero"}},
      {train_with({"--data-dir", "/nonexistent"}), {}},  // spirals ignore it: see the fashion-mnist row below
      {{"train", "--model", "mlp", "--data-dir", "/nonexistent", "--epochs", "1"}, {"/nonexistent"}},
      {train_with({"--save", "/nonexistent/run.ckpt"}), {"--save '/nonexistent/run.ckpt'", "does not exist"}},
      {train_with({"--load", "/nonexistent/w.safetensors"}), {"/nonexistent/w.safetensors"}},
      {train_with({"--resume", "/nonexistent/run.ckpt"}), {"/nonexistent/run.ckpt"}},
      {train_with({"--resume", "a", "--load", "b"}), {"--resume", "--load", "one of them"}},
      {train_with({"--memory-report", "/"}), {"--memory-report '/' is a folder"}},
      {train_with({"--memory-trace", "/nonexistent/t.json"}), {"--memory-trace", "does not exist"}},
      {train_with({"--memory-json", "/nonexistent/r.json"}), {"--memory-json", "does not exist"}},
      // ember eval
      {{"eval", "--load", "w", "--model", "vgg"}, {"--model must be one of"}},
      {{"eval", "--load", "w", "--data", "moons"}, {"--data must be one of"}},
      {{"eval", "--load", "w", "--threads", "x"}, {"--threads must be an integer >= 0, got x"}},
      {{"eval", "--load", "w", "--threads", "1000000"}, {"--threads must be at most", "got 1000000"}},
      {{"eval", "--load", "/nonexistent/w.safetensors", "--model", "mlp", "--data", "spirals"}, {"/nonexistent/w.safetensors"}},
      {{"eval", "--load", "w", "--model", "mlp", "--data", "spirals", "--device", "tpu"}, {"tpu"}},
      {{"eval", "--load", "w", "--model", "mlp", "--data-dir", "/nonexistent"}, {"/nonexistent"}},
      // ember bench-train
      {{"bench-train", "--model", "vgg"}, {"--model must be one of"}},
      {{"bench-train", "--batch", "0"}, {"--batch must be a positive integer, got 0"}},
      {{"bench-train", "--threads", "0"}, {"--threads must be a positive integer, got 0"}},
      {{"bench-train", "--threads", "1000000"}, {"--threads must be at most", "got 1000000"}},
      {{"bench-train", "--steps", "0"}, {"--steps must be a positive integer, got 0"}},
      {{"bench-train", "--warmup", "-1"}, {"--warmup must be an integer >= 0, got -1"}},
      {{"bench-train", "--optimizer", "lamb"}, {"--optimizer must be one of"}},
      {{"bench-train", "--device", "gpu"}, {"gpu"}},
      {{"bench-train", "--precision", "bf16"}, {"--precision must be one of fp32, fp16; got bf16"}},
      {{"bench-train", "--checkpoint", "some"}, {"--checkpoint", "some"}},
      {{"bench-train", "--accum", "-1"}, {"--accum must be a positive integer, got -1"}},
      {{"bench-train", "--memory-budget", "lots"}, {"--memory-budget", "lots"}},
      {{"bench-train", "--zero", "-1"}, {"--zero must be a ZeRO stage from 0 to 2, got -1"}},
      {{"bench-train", "--bucket-size", "lots"}, {"--bucket-size", "lots"}},
      {{"bench-train", "--memory-limit", "1e30"}, {"--memory-limit", "1e30"}},
      {{"bench-train", "--memory-steps", "0"}, {"--memory-steps must be a positive integer, got 0"}},
      {{"bench-train", "--memory-report", "/nonexistent/r.html"}, {"--memory-report", "does not exist"}},
      {{"bench-train", "--memory-trace", "/"}, {"--memory-trace '/' is a folder"}},
      {{"bench-train", "--memory-json", "/nonexistent/r.json"}, {"--memory-json", "does not exist"}},
      // ember plan
      {{"plan", "--model", "vgg"}, {"--model must be one of"}},
      {{"plan", "--batch", "-64"}, {"--batch must be a positive integer, got -64"}},
      {{"plan", "--threads", "0"}, {"--threads must be a positive integer, got 0"}},
      {{"plan", "--optimizer", "lamb"}, {"--optimizer must be one of"}},
      {{"plan", "--device", "cuda:x"}, {"cuda:x"}},
      {{"plan", "--precision", "int8"}, {"--precision must be one of"}},
      {{"plan", "--checkpoint", "-1"}, {"--checkpoint", "-1"}},
      {{"plan", "--accum", "1.5"}, {"--accum must be a positive integer, got 1.5"}},
      {{"plan", "--memory-budget", "inf"}, {"--memory-budget", "inf"}},
      {{"plan", "--zero", "1.5"}, {"--zero must be a ZeRO stage, got 1.5"}},
      {{"plan", "--bucket-size", "-1MiB"}, {"--bucket-size", "-1MiB"}},
      {{"plan", "--ranks", "0"}, {"--ranks must be a number of processes from 1 to 1048576, got 0"}},
      // ember compare
      {{"compare", "/nonexistent/a.json", "/nonexistent/b.json"}, {"/nonexistent/a.json"}},
      {{"compare", "a.json", "b.json", "--output", "/nonexistent/c.html"}, {"--output '/nonexistent/c.html'", "does not exist"}},
      // ember lab
      {{"lab", "--threads", "0"}, {"--threads must be a positive integer, got 0"}},
      {{"lab", "--threads", "1000000"}, {"--threads must be at most", "got 1000000"}},
      {{"lab", "--budget-mib", "4"}, {"--budget-mib must be a whole number of MiB from 8 to 1048576, got 4"}},
      {{"lab", "--out", "/proc/lab"}, {"cannot create '/proc/lab'"}},
      {{"lab", "--data-dir", "/nonexistent"}, {"--data-dir '/nonexistent' is not a folder"}},
  };
  return table;
}

}  // namespace

TEST_CASE("every flag with a bad value fails with a sentence naming it, before any work", "[cli]") {
  for (const BadValue& bad : bad_values()) {
    std::string command;
    for (const std::string& a : bad.args) command += " " + a;
    INFO("ember" << command);
    const std::string message = error_of(bad.args);
    INFO("message: " << message);
    if (bad.fragments.empty()) continue;  // a row that documents an ignored value
    CHECK_FALSE(message.empty());
    for (const std::string& fragment : bad.fragments) CHECK(message.find(fragment) != std::string::npos);
  }
}

TEST_CASE("every flag that takes a value has a bad-value row above", "[cli]") {
  std::set<std::string> covered;
  for (const BadValue& bad : bad_values())
    for (size_t i = 1; i < bad.args.size(); ++i)
      if (bad.args[i].rfind("--", 0) == 0 || i == 1) covered.insert(bad.args[0] + " " + bad.args[i]);
  CommandLine cli;
  for (const CLI::App* sub : cli.app.get_subcommands({})) {
    for (const CLI::Option* option : sub->get_options()) {
      if (option->get_expected_min() == 0) continue;  // a flag: nothing to get wrong
      const std::string name = option->get_lnames().empty() ? option->get_name() : "--" + option->get_lnames().front();
      INFO("ember " << sub->get_name() << " " << name);
      CHECK((covered.count(sub->get_name() + " " + name) || option->get_positional()));
    }
  }
}
