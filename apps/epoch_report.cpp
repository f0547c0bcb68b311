#include "apps/epoch_report.h"

namespace ember::apps {

namespace {
constexpr double kBytesPerMiB = 1024.0 * 1024.0;
}  // namespace

nlohmann::ordered_json peak_mib_by_category(const MemoryStats& stats) {
  nlohmann::ordered_json j;
  for (int c = 0; c < kNumMemoryCategories; ++c)
    j[category_name(static_cast<MemoryCategory>(c))] = static_cast<double>(stats.by_category[c].peak) / kBytesPerMiB;
  return j;
}

EpochReport::EpochReport(std::ostream& out, bool text, bool progress, int64_t epochs, int64_t samples)
    : out_(out), text_(text), progress_(progress), epochs_(epochs), samples_(samples),
      table_({{"epoch", "epoch", 5, 0},
              {"loss", "loss", 8, 4},
              {"accuracy_percent", "train acc %", 11, 2},
              {"test_accuracy_percent", "test acc %", 10, 2},
              {"seconds", "time s", 7, 2},
              {"samples_per_s", "images/s", 10, 0},
              {"peak_mib", "peak MiB", 9, 2},
              {"peak_param_mib", "param", 7, 2},
              {"peak_grad_mib", "grad", 7, 2},
              {"peak_optim_mib", "optim", 7, 2},
              {"peak_master_mib", "master", 7, 2},
              {"peak_act_mib", "act", 7, 2},
              {"peak_data_mib", "data", 7, 2}}) {}

train::FitCallbacks EpochReport::callbacks() {
  train::FitCallbacks c;
  c.on_epoch_start = [this](int64_t epoch) {
    bar_ = std::make_unique<ProgressBar>(out_, samples_, "epoch " + std::to_string(epoch) + "/" + std::to_string(epochs_),
                                         progress_);
  };
  c.on_step = [this](const train::StepProgress& p) { bar_->update(p.samples_done, p.mean_loss); };
  c.on_epoch = [this](const train::EpochResult& e) { add_epoch(e); };
  return c;
}

void EpochReport::add_epoch(const train::EpochResult& e) {
  if (bar_) bar_->finish();
  const nlohmann::ordered_json peak = peak_mib_by_category(e.memory);
  const std::string row = table_.add_row(
      {e.epoch, e.loss, 100.0 * e.accuracy, e.eval ? 100.0 * e.eval->accuracy : 0.0, e.seconds,
       static_cast<double>(e.samples) / e.seconds, static_cast<double>(e.memory.allocated_bytes.peak) / kBytesPerMiB,
       peak["parameter"].get<double>(), peak["gradient"].get<double>(), peak["optimizer_state"].get<double>(),
       peak["master_weights"].get<double>(), peak["activation"].get<double>(), peak["data"].get<double>()});
  peaks_.push_back(peak);
  if (text_) out_ << row << std::flush;
}

}  // namespace ember::apps
