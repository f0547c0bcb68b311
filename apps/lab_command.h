#pragma once
// `ember lab`: the memory lab. One experiment per remedy for running out of memory, each
// measured in this invocation on this machine, written as a markdown page with SVG
// pictures (docs/lab/ holds the last run's; docs/memory.md links it):
//
//   ember lab --out docs/lab --threads 2         # about two minutes on a 2-core CPU
//
//   1. batch size: activation peak against batch 8..512, the fitted line, the largest batch
//      that fits a budget;            2. gradient accumulation: peak and accuracy, effective
//   batch fixed;                       3. checkpointing none / every block / sqrt: activation
//   peak against time per step;        4. fp32 against fp16 by category;
//   5. releasing cached memory: reserved and allocated through freeing and empty_cache();
//   6. data loading: step time and time waiting for data, prefetch on and off.
#include <cstdint>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace ember::apps {

struct LabOptions {
  std::string out = "docs/lab";  // the folder written: README.md and the pictures
  int threads = 2;
  std::string data_dir;          // Fashion-MNIST; empty: the Debian package's folder
  int64_t budget_mib = 64;       // the budget of the batch-size experiment
};

CLI::App* add_lab_command(CLI::App& app, LabOptions& options);
// Runs every experiment (progress on `log`) and writes the page; returns its path.
std::string lab_command(const LabOptions& options, std::ostream& log);

}  // namespace ember::apps
