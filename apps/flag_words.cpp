#include "apps/flag_words.h"

#include <regex>
#include <utility>
#include <vector>

namespace ember::apps {

std::string flag_words(const std::string& message) {
  // The fields of train::TrainerOptions, and the options ember train records in a checkpoint
  // (apps/train_resume.h), that have a flag of the same name.
  static const std::regex field(
      R"(\b(precision|checkpoint|accum|batch|model|data|optimizer|lr|weight-decay|schedule|epochs|seed|momentum|)"
      R"(nesterov|samples-per-class|classes|noise) = )");
  // Library names for what a flag does.
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"TrainerOptions: ", ""},
      {"resume '", "--resume '"},
      {"anomaly detection (DetectAnomalyGuard)", "anomaly detection (--detect-anomaly)"},
      {"which load_weights reads", "which --load reads"},
      {"save_memory_run", "--memory-json"},
      {"data_parallel.zero = ", "--zero "},
      {"data_parallel.ranks = ", "mpirun -np "},
      {"data_parallel.rank = ", "rank "},
      {"data_parallel.bucket_bytes = ", "--bucket-size "},
      {"DataParallelOptions: bucket_bytes = ", "--bucket-size "},
      {"DataParallelOptions: zero = ", "--zero "},
  };
  std::string text = std::regex_replace(message, field, "--$1 ");
  for (const auto& [library, flag] : names)
    for (size_t at = text.find(library); at != std::string::npos; at = text.find(library, at + flag.size()))
      text.replace(at, library.size(), flag);
  return text;
}

}  // namespace ember::apps
