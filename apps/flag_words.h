#pragma once
// The library names options as fields ("accum = 3 does not divide batch = 64",
// "checkpoint = sqrt"); the command line names them as flags. flag_words() rewrites a
// library message in the flags' words before the CLI prints it:
//
//   flag_words("TrainerOptions: accum = 3 does not divide batch = 64")
//     == "--accum 3 does not divide --batch 64"
#include <string>

namespace ember::apps {

std::string flag_words(const std::string& message);

}  // namespace ember::apps
