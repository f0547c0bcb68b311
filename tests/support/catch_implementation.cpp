// Catch2 v2's implementation, compiled once for the three test programs (ember_tests,
// ember_dist_tests, ember_data_parallel_tests), whose own main() (tests/main.cpp,
// tests/dist/main.cpp) runs a Catch::Session. It is the slowest file of the build: alone here,
// it is built once, at -O1 and without the sanitizers (tests/CMakeLists.txt), instead of three
// times with them.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
