#pragma once
// What `ember train` prints while train::fit runs: a progress bar through each epoch, then the
// epoch's row of the table (loss, accuracies, time, rate, peak memory by category), kept for
// --json as well.
//
//   EpochReport report(std::cout, /*text=*/true, /*progress=*/true, epochs, samples);
//   std::cout << report.header();
//   train::FitResult r = train::fit(trainer, loader, &test_loader, options, report.callbacks());
//   nlohmann::ordered_json rows = report.rows(), peaks = report.peaks();
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/progress_bar.h"
#include "apps/report_table.h"
#include "train/fit.h"

namespace ember::apps {

class EpochReport {
 public:
  // `text`: print the rows as they come (off under --json); `progress`: draw the bar.
  EpochReport(std::ostream& out, bool text, bool progress, int64_t epochs, int64_t samples);
  std::string header() const { return table_.header(); }
  train::FitCallbacks callbacks();
  nlohmann::ordered_json rows() const { return table_.json(); }
  const nlohmann::ordered_json& peaks() const { return peaks_; }  // each epoch's peak MiB by category

 private:
  void add_epoch(const train::EpochResult& e);

  std::ostream& out_;
  bool text_, progress_;
  int64_t epochs_, samples_;
  ReportTable table_;
  nlohmann::ordered_json peaks_ = nlohmann::ordered_json::array();
  std::unique_ptr<ProgressBar> bar_;
};

// Peak bytes of each memory category in `stats`, in MiB, as JSON.
nlohmann::ordered_json peak_mib_by_category(const MemoryStats& stats);

}  // namespace ember::apps
