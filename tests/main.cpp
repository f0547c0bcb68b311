// Catch2 entry point. CUDA test cases are tagged [cuda] and named "cuda: ...";
// those that need two GPUs are tagged [cuda][multigpu] and named "cuda x2: ...".
// Without the GPUs they cannot run: run alone (as CTest does, one case per process)
// such a case exits 77, which CTest reports as skipped; in a run of several
// cases, they are filtered out and counted as skipped. Never silently passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstring>
#include <iostream>
#include <string>

#include "core/cuda_runtime.h"

// "a,b" means "a or b": excludes `tag` from each alternative, put first: after a name pattern
// Catch would read "~[tag]" as part of the name. "\\," (an escaped comma,
// as CTest passes test names) is part of a name, not a separator.
namespace {
std::string exclude_tag(const std::string& spec, const std::string& tag) {
  std::string out, part;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == '\\' && i + 1 < spec.size()) {
      part += spec.substr(i, 2);
      ++i;
    } else if (spec[i] == ',') {
      out += (out.empty() ? "" : ",") + std::string("~") + tag + part;
      part.clear();
    } else {
      part += spec[i];
    }
  }
  return out + (out.empty() ? "" : ",") + std::string("~") + tag + part;
}

// True when spec has a tag: an unescaped '[' (CTest escapes brackets inside names).
bool has_tag(const std::string& spec) {
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == '\\') ++i;
    else if (spec[i] == '[') return true;
  }
  return false;
}
}  // namespace

int main(int argc, char** argv) {
  constexpr int kSkipped = 77;
  const int gpus = ember::cuda::device_count();
  if (argc >= 2 && std::strncmp(argv[1], "cuda: ", 6) == 0 && gpus < 1) {
    std::cout << "skipped: '" << argv[1] << "' needs a GPU and this machine has none\n";
    return kSkipped;
  }
  if (argc >= 2 && std::strncmp(argv[1], "cuda x2: ", 9) == 0 && gpus < 2) {
    std::cout << "skipped: '" << argv[1] << "' needs two GPUs and this machine has " << gpus << "\n";
    return kSkipped;
  }
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  const Catch::ConfigData& config = session.configData();
  // Listing (CTest's discovery) must still see the [cuda] cases: CTest runs each alone, and they exit 77.
  const bool listing = config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters;
  if (gpus < 2 && !listing) {
    const std::string tag = gpus < 1 ? "[cuda]" : "[multigpu]";
    auto& specs = session.configData().testsOrTags;
    if (specs.empty()) specs.push_back("~" + tag);
    // Test names (CTest's one-case runs) are left alone: a CUDA case's name starts with "cuda: " or
    // "cuda x2: " and was handled above. Tag expressions get the exclusion.
    else for (std::string& spec : specs)
      if (has_tag(spec)) spec = exclude_tag(spec, tag);
    std::cerr << (gpus < 1 ? "no GPU: [cuda] test cases are skipped\n" : "one GPU: [multigpu] test cases are skipped\n");
  }
  return session.run();
}
