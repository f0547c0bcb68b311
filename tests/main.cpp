// Catch2 entry point. CUDA test cases are tagged [cuda] and named "cuda: ...".
// Without a GPU they cannot run: run alone (as CTest does, one case per process)
// such a case exits 77, which CTest reports as skipped; in a run of several
// cases, [cuda] ones are filtered out and counted as skipped. Never silently passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstring>
#include <iostream>
#include <sstream>
#include <string>

#include "core/cuda_runtime.h"

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
    else for (std::string& spec : specs) {  // "a,b" is "a or b": exclude [cuda] from each alternative
      std::string out, part;
      std::istringstream alternatives(spec);
      while (std::getline(alternatives, part, ',')) out += (out.empty() ? "" : ",") + part + " ~[cuda]";  // a space: "and not"
      spec = out;
    }
    std::cerr << "no GPU: [cuda] test cases are skipped\n";
  }
  return session.run();
}
