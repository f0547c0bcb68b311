// Catch2 entry point. CUDA test cases are named "cuda: ..."; when one is run
// alone (as CTest does) on a machine without a GPU, it reports itself skipped
// (exit code 77, CTest's SKIP_RETURN_CODE) instead of passing silently.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstring>
#include <iostream>

#include "core/cuda_runtime.h"

int main(int argc, char** argv) {
  constexpr int kSkipped = 77;
  if (argc >= 2 && std::strncmp(argv[1], "cuda: ", 6) == 0 && !ember::cuda::is_available()) {
    std::cout << "skipped: '" << argv[1] << "' needs a GPU and this machine has none\n";
    return kSkipped;
  }
  return Catch::Session().run(argc, argv);
}
