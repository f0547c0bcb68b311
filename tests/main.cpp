// Catch2 entry point. CUDA test cases are tagged [cuda] and named "cuda: ...".
// Without a GPU they cannot run: run alone (as CTest does, one case per process)
// such a case exits 77, which CTest reports as skipped; in a run of several
// cases, [cuda] ones are filtered out and counted as skipped. Never silently passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstring>
#include <iostream>
#include <string>

#include "core/cuda_runtime.h"

// "a,b" means "a or b": excludes [cuda] from each alternative. "\\," (an escaped comma,
// as CTest passes test names) is part of a name, not a separator.
namespace {
std::string exclude_cuda(const std::string& spec) {
  std::string out, part;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == '\\' && i + 1 < spec.size()) {
      part += spec.substr(i, 2);
      ++i;
    } else if (spec[i] == ',') {
      out += (out.empty() ? "" : ",") + part + "~[cuda]";
      part.clear();
    } else {
      part += spec[i];
    }
  }
  return out + (out.empty() ? "" : ",") + part + "~[cuda]";
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
  const bool have_gpu = ember::cuda::is_available();
  if (argc >= 2 && std::strncmp(argv[1], "cuda: ", 6) == 0 && !have_gpu) {
    std::cout << "skipped: '" << argv[1] << "' needs a GPU and this machine has none\n";
    return kSkipped;
  }
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  const Catch::ConfigData& config = session.configData();
  // Listing (CTest's discovery) must still see the [cuda] cases: CTest runs each alone, and they exit 77.
  const bool listing = config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters;
  if (!have_gpu && !listing) {
    auto& specs = session.configData().testsOrTags;
    if (specs.empty()) specs.push_back("~[cuda]");
    // Test names (CTest's one-case runs) are left alone: a CUDA case's name starts with "cuda: " and
    // was handled above. Tag expressions get the exclusion.
    else for (std::string& spec : specs)
      if (has_tag(spec)) spec = exclude_cuda(spec);
    std::cerr << "no GPU: [cuda] test cases are skipped\n";
  }
  return session.run();
}
