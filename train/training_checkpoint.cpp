#include "train/training_checkpoint.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/error.h"
#include "core/generator.h"

namespace ember::train {

namespace {

const char* const kOwnKeys[] = {"format",      "next_epoch",    "next_batch",     "epoch_loss_sum",
                                "epoch_correct", "epoch_seen", "generator_seed", "generator_offset"};

class MetadataReader {
 public:
  MetadataReader(const data::SafetensorsMetadata& metadata, const std::string& path) : m_(metadata), path_(path) {}

  const std::string& text(const char* key) const {
    auto it = m_.find(key);
    EMBER_CHECK(it != m_.end(), "training checkpoint '" << path_ << "': metadata field '" << key << "' is missing");
    return it->second;
  }
  uint64_t unsigned_integer(const char* key) const {
    const std::string& t = text(key);
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
    EMBER_CHECK(!t.empty() && t[0] != '-' && *end == '\0' && errno == 0,
                "training checkpoint '" << path_ << "': metadata field '" << key << "' is '" << t
                                        << "', expected a whole number >= 0");
    return v;
  }
  int64_t count(const char* key) const {
    const uint64_t v = unsigned_integer(key);
    EMBER_CHECK(v <= static_cast<uint64_t>(INT64_MAX),
                "training checkpoint '" << path_ << "': metadata field '" << key << "' is " << v << ", too large");
    return static_cast<int64_t>(v);
  }
  double real(const char* key) const {
    const std::string& t = text(key);
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    EMBER_CHECK(!t.empty() && *end == '\0' && std::isfinite(v), "training checkpoint '" << path_ << "': metadata field '"
                                                                                      << key << "' is '" << t
                                                                                      << "', expected a finite number");
    return v;
  }

 private:
  const data::SafetensorsMetadata& m_;
  const std::string& path_;
};

}  // namespace

std::string round_trip_text(double value) {
  std::ostringstream os;
  os.precision(17);  // enough digits that reading it back gives the same double
  os << value;
  return os.str();
}

bool is_training_checkpoint(const data::SafetensorsMetadata& metadata) {
  auto it = metadata.find("format");
  return it != metadata.end() && it->second == kTrainingCheckpointFormat;
}

void save_training_checkpoint(const std::string& path, const Trainer& trainer, const TrainingPosition& position,
                              const data::SafetensorsMetadata& metadata) {
  for (const char* key : kOwnKeys)
    EMBER_CHECK(!metadata.count(key), "save_training_checkpoint: metadata key '" << key << "' is the checkpoint's own");
  data::SafetensorsMetadata all = metadata;
  const GeneratorState generator = generator_state();
  all["format"] = kTrainingCheckpointFormat;
  all["next_epoch"] = std::to_string(position.epoch);
  all["next_batch"] = std::to_string(position.batch);
  all["epoch_loss_sum"] = round_trip_text(position.loss_sum);
  all["epoch_correct"] = std::to_string(position.correct);
  all["epoch_seen"] = std::to_string(position.seen);
  all["generator_seed"] = std::to_string(generator.seed);
  all["generator_offset"] = std::to_string(generator.offset);
  data::save_safetensors(path, trainer.state_dict(), all);
}

TrainingCheckpoint read_training_checkpoint(const std::string& path) {
  TrainingCheckpoint c;
  c.path = path;
  c.state = data::load_safetensors(path, &c.metadata);
  EMBER_CHECK(is_training_checkpoint(c.metadata),
              "'" << path << "' is not a training checkpoint (its metadata has no format \"" << kTrainingCheckpointFormat
                  << "\"): it holds weights only, which load_weights reads");
  const MetadataReader m(c.metadata, path);
  TrainingPosition& p = c.position;
  p.epoch = m.count("next_epoch");
  p.batch = m.count("next_batch");
  p.loss_sum = m.real("epoch_loss_sum");
  p.correct = m.count("epoch_correct");
  p.seen = m.count("epoch_seen");
  c.generator.seed = m.unsigned_integer("generator_seed");
  c.generator.offset = m.unsigned_integer("generator_offset");
  return c;
}

void restore(const TrainingCheckpoint& checkpoint, Trainer& trainer) {
  trainer.load_state_dict(checkpoint.state, "'" + checkpoint.path + "'");
  set_generator_state(checkpoint.generator);
}

}  // namespace ember::train
