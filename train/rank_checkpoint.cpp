#include "train/rank_checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "kernels/factories.h"
#include "memory/empty.h"
#include "optim/state_dict.h"

namespace ember::train {

namespace {

constexpr int64_t kNone = -1;

std::string previous_of(const std::string& file) { return file + ".previous"; }

int64_t saved_steps(const TrainingCheckpoint& c) {
  optim::StateDictReader reader(c.state, "training checkpoint '" + c.path + "'");
  return reader.count("trainer.steps", 0);
}

}  // namespace

std::string rank_checkpoint_path(const std::string& path, int rank) {
  return rank == 0 ? path : path + ".rank" + std::to_string(rank);
}

void save_rank_checkpoint(const std::string& path, dist::ProcessGroup& group, const Trainer& trainer,
                          const TrainingPosition& position, const data::SafetensorsMetadata& metadata) {
  const std::string file = rank_checkpoint_path(path, group.rank());
  std::error_code error;
  if (std::filesystem::exists(file, error)) {
    std::filesystem::rename(file, previous_of(file), error);
    EMBER_CHECK(!error, "save checkpoint '" << file << "': could not move the last one to '" << previous_of(file)
                                            << "': " << error.message());
  }
  save_training_checkpoint(file, trainer, position, metadata);
}

TrainingCheckpoint read_rank_checkpoint(const std::string& path, dist::ProcessGroup& group) {
  const std::string file = rank_checkpoint_path(path, group.rank());
  std::vector<TrainingCheckpoint> held;  // this file, then its previous one: those that read
  std::string unreadable;
  for (const std::string& f : {file, previous_of(file)}) {
    std::error_code error;
    if (!std::filesystem::exists(f, error)) continue;
    try {
      held.push_back(read_training_checkpoint(f));
    } catch (const Error& e) {
      unreadable += std::string(unreadable.empty() ? "" : "; ") + e.what();
    }
  }
  // Every rank's two steps (kNone where it holds fewer), then the newest held by all.
  Tensor mine = from_vector<int64_t>({held.size() > 0 ? saved_steps(held[0]) : kNone,
                                      held.size() > 1 ? saved_steps(held[1]) : kNone},
                                     Shape{2}, TensorOptions().dtype(DType::i64));
  Tensor all = empty({2 * group.size()}, TensorOptions().dtype(DType::i64));
  group.all_gather(mine, all);
  const int64_t* steps = all.data<int64_t>();
  int64_t agreed = kNone;
  for (int k = 0; k < 2; ++k) {
    const int64_t candidate = steps[k];  // rank 0's
    if (candidate == kNone || candidate <= agreed) continue;
    bool everywhere = true;
    for (int r = 1; r < group.size(); ++r)
      everywhere = everywhere && (steps[2 * r] == candidate || steps[2 * r + 1] == candidate);
    if (everywhere) agreed = candidate;
  }
  if (agreed == kNone) {
    std::ostringstream os;
    os << "resume '" << path << "': the " << group.size() << " ranks' checkpoint files hold no step in common:";
    for (int r = 0; r < group.size(); ++r) {
      os << (r == 0 ? " " : "; ") << "rank " << r << " (" << rank_checkpoint_path(path, r) << " and .previous) ";
      if (steps[2 * r] == kNone) os << "none readable";
      else os << "step " << steps[2 * r] << (steps[2 * r + 1] == kNone ? "" : " and " + std::to_string(steps[2 * r + 1]));
    }
    os << (unreadable.empty() ? "" : ". This rank could not read: " + unreadable)
       << ". Resume with as many ranks as the run was saved with, from the files it wrote";
    EMBER_THROW(os.str());
  }
  for (TrainingCheckpoint& c : held)
    if (saved_steps(c) == agreed) return std::move(c);
  EMBER_THROW("resume '" << path << "': internal: step " << agreed << " agreed but not held by rank " << group.rank());
}

}  // namespace ember::train
